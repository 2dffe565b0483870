"""CHECK TABLE and REPAIR TABLE: each kind of damage is reported, then repaired.

Damage is done the way it happens in life: from outside the engine (another program writing the
file with plain SQLite), or to this connection's in-memory index.
"""
from __future__ import annotations

import apsw
import numpy as np
import pytest

import tesseradb
from tesseradb import errors
from stress_plan import MODEL

pytestmark = pytest.mark.stress

SCHEMA = [
    "CREATE TABLE d (title text, v float_vector knn_type='hnsw' knn_dims='3' hnsw_similarity='l2', "
    "a float_vector_array knn_type='hnsw' knn_dims='2' hnsw_similarity='cosine', "
    f"c float_vector_array knn_type='hnsw' hnsw_similarity='cosine' model_name='{MODEL}' from='title' "
    "chunk_strategy='recursive' max_tokens='8')",
    "CREATE TABLE plain (x int, s text)",
]
TITLES = ["rotating certificates every ninety days with the operator",
          "a recipe for sourdough bread with a long cold proof",
          "the orbit of jupiter's moons observed through a small telescope",
          "sailing upwind in a strong breeze without capsizing the dinghy"]


@pytest.fixture
def db(tmp_path):
    path = str(tmp_path / "integrity.db")
    con = tesseradb.connect(path)
    for sql in SCHEMA:
        con.execute(sql)
    con.executemany("INSERT INTO d (id, title, v, a) VALUES (?, ?, ?, ?)",
                    [(i, TITLES[i % 4] + f" (part {i})", [i, 1.0, 2.0], [[1.0, float(i)]] * (i % 3)) for i in range(1, 21)])
    con.execute("INSERT INTO plain (x, s) VALUES (1, 'one')")
    con.commit()
    assert _knn(con, "v") == set(range(1, 21))       # the indexes are loaded
    yield con, path
    if not con.closed:
        con.close()


def _knn(con, col: str, k: int = 1000) -> set[int]:
    query = {"v": "(0, 0, 0)", "a": "(1, 1)", "c": "'anything'"}[col]
    return {r[0] for r in con.execute(f"SELECT id FROM d WHERE knn({col}, {k}, {query})")}


def _raw(path: str, *statements: str) -> None:
    """Write with plain SQLite, as another program would."""
    other = apsw.Connection(path)
    for sql in statements:
        other.execute(sql)
    other.close()


def _chunks(con, col: str) -> str:
    return con.db.tables["d"].layout(col).chunks


def _msgs(rows) -> list[str]:
    return [f"{r[2]}: {r[3]}" for r in rows]


def test_healthy_tables_check_ok(db):
    con, _ = db
    cur = con.execute("CHECK TABLE d")
    assert [c[0] for c in cur.description] == ["Table", "Op", "Msg_type", "Msg_text"]
    assert cur.fetchall() == [("d", "check", "status", "OK")]
    assert con.execute("CHECK TABLE plain").fetchall() == [("plain", "check", "status", "OK")]
    repair = con.execute("REPAIR TABLE d").fetchall()
    assert repair[-1] == ("d", "repair", "status", "OK")
    assert sum("rebuilt the index" in r[3] for r in repair) == 3, repair
    con.commit()
    assert _knn(con, "v") == _knn(con, "c") == set(range(1, 21))
    with pytest.raises(errors.NoSuchTable):
        con.execute("CHECK TABLE nope")


def test_missing_chunk_rows_are_rebuilt_from_the_vectors(db):
    con, path = db
    _raw(path, f'DELETE FROM "{_chunks(con, "a")}" WHERE doc_id IN (4, 5)')
    check = con.execute("CHECK TABLE d").fetchall()
    assert check[-1][2:] == ("error", "Corrupt")
    assert any("2 rows with chunk rows that do not match their vectors (id 4, 5; id 4 has 1 vectors and 0 chunk rows)"
               in m for m in _msgs(check)), check
    assert 4 not in _knn(con, "a")                    # what the damage does to search
    repair = con.execute("REPAIR TABLE d").fetchall()
    assert any("rebuilt the chunk rows of 2 rows from their vectors (id 4, 5)" in m for m in _msgs(repair)), repair
    assert repair[-1][2:] == ("status", "OK")
    con.commit()
    assert _knn(con, "a") == {i for i in range(1, 21) if i % 3}
    assert con.execute("CHECK TABLE d").fetchall() == [("d", "check", "status", "OK")]


def test_orphan_chunk_rows_and_a_missing_trigger(db):
    con, path = db
    chunks = _chunks(con, "v")
    _raw(path, f'INSERT INTO "{chunks}" (doc_id, ord) VALUES (999, 0)', f'DROP TRIGGER "{chunks}_del"')
    check = _msgs(con.execute("CHECK TABLE d").fetchall())
    assert any("1 chunk row belong to no row of the table" in m for m in check), check
    assert any("trigger that deletes a row's chunks" in m for m in check), check
    repair = _msgs(con.execute("REPAIR TABLE d").fetchall())
    assert any("deleted 1 chunk row that belonged to no row" in m for m in repair), repair
    assert any("recreated the trigger" in m for m in repair), repair
    con.commit()
    con.execute("DELETE FROM d WHERE id = 3")          # the trigger works again
    con.commit()
    assert con.execute(f'SELECT COUNT(*) FROM d WHERE id = 3').fetchone() == (0,)
    assert _knn(con, "v") == set(range(1, 21)) - {3}
    assert con.execute("CHECK TABLE d").fetchall() == [("d", "check", "status", "OK")]


def test_unreadable_supplied_vectors_are_cleared_and_said_so(db):
    con, path = db
    _raw(path, "UPDATE d SET v = x'00010203' WHERE id = 6", "UPDATE d SET a = x'0300000000' WHERE id = 7")
    check = _msgs(con.execute("CHECK TABLE d").fetchall())
    assert any("column 'v': the vectors of 1 row cannot be read (id 6; id 6: the value is 4 bytes" in m for m in check), check
    assert any("column 'a': the vectors of 1 row cannot be read (id 7; id 7: the value says 3 dimensions" in m
               for m in check), check
    repair = _msgs(con.execute("REPAIR TABLE d").fetchall())
    assert any("cleared the unreadable vectors of 1 row (id 6); they were lost" in m for m in repair), repair
    con.commit()
    assert con.execute("SELECT v, a FROM d WHERE id = 6").fetchone()[0] is None
    assert con.execute("SELECT a FROM d WHERE id = 7").fetchone() == ([],)
    assert _knn(con, "v") == set(range(1, 21)) - {6}
    assert con.execute("CHECK TABLE d").fetchall() == [("d", "check", "status", "OK")]


def test_unreadable_model_vectors_are_embedded_again(db):
    con, path = db
    _raw(path, "UPDATE d SET c = x'ffff' WHERE id = 2")
    check = _msgs(con.execute("CHECK TABLE d").fetchall())
    assert any("column 'c': the vectors of 1 row cannot be read (id 2" in m for m in check), check
    repair = _msgs(con.execute("REPAIR TABLE d").fetchall())
    assert any("column 'c': embedded 1 row again from their 'from' columns (id 2)" in m for m in repair), repair
    con.commit()
    top = con.execute("SELECT id FROM d WHERE knn(c, 1, ?)", (TITLES[2] + " (part 2)",)).fetchall()
    assert top == [(2,)]
    assert con.execute("CHECK TABLE d").fetchall() == [("d", "check", "status", "OK")]


def test_a_dropped_chunk_table_is_recreated(db):
    con, path = db
    _raw(path, f'DROP TABLE "{_chunks(con, "c")}"')
    con.close()
    con = tesseradb.connect(path)
    check = _msgs(con.execute("CHECK TABLE d").fetchall())
    assert any("column 'c': its chunk table" in m and "is missing" in m for m in check), check
    repair = _msgs(con.execute("REPAIR TABLE d").fetchall())
    assert any("recreated its chunk table" in m for m in repair), repair
    assert any("column 'c': rebuilt the chunk rows of 20 rows" in m for m in repair), repair
    con.commit()
    assert _knn(con, "c") == set(range(1, 21))
    assert con.execute("CHECK TABLE d").fetchall() == [("d", "check", "status", "OK")]
    con.close()


def test_a_damaged_index_in_memory_is_found_and_rebuilt(db):
    con, _ = db
    idx = con.db.column_index(con.db.tables["d"], "v")
    idx.index.add(np.array([10_000]), np.array([5]), np.array([[9.0, 9.0, 9.0]], np.float32))  # a ghost chunk
    idx.index.remove_chunks([int(idx.index.chunk_ids()[0])])                                     # a lost one
    check = _msgs(con.execute("CHECK TABLE d").fetchall())
    assert any("the index holds 1 chunk that the table does not (chunk id 10000)" in m for m in check), check
    assert any("the index lacks 1 chunk of the table" in m for m in check), check
    repair = _msgs(con.execute("REPAIR TABLE d").fetchall())
    assert any("column 'v': rebuilt the index from the table (20 chunks of 20 rows)" in m for m in repair), repair
    con.commit()
    assert con.execute("CHECK TABLE d").fetchall() == [("d", "check", "status", "OK")]


def test_check_inside_a_transaction_and_repair_rolled_back(db):
    con, path = db
    con.execute("INSERT INTO d (id, title, v) VALUES (100, 'uncommitted', (1, 1, 1))")
    check = con.execute("CHECK TABLE d").fetchall()
    assert check[-1][2:] == ("status", "OK")
    assert any("open transaction has changed this column" in r[3] for r in check), check
    con.rollback()
    _raw(path, f'DELETE FROM "{_chunks(con, "v")}" WHERE doc_id = 8')
    con.execute("REPAIR TABLE d").fetchall()
    con.rollback()                                   # the repair is undone; the index stays truthful
    assert _knn(con, "v") == set(range(1, 21)) - {8}
    assert con.execute("CHECK TABLE d").fetchall()[-1][2:] == ("error", "Corrupt")
