"""Issue 37 item 4: INSERT ... SELECT streams its rows in batches (sql/statements/insert_select.py).

The batch size is lowered here so that a few rows cross several batch edges; every statement must
give what it gave as one batch: the same rows, ids, counts, errors and vectors, each source row
copied once (Halloween), and a failure in a late batch undoing the earlier ones."""
from __future__ import annotations

import pytest

import tesseradb
from tesseradb.sql import write
from tesseradb.sql.statements import insert_select

MODEL = "model_name='Xenova/all-MiniLM-L6-v2'"


@pytest.fixture
def small_batches(monkeypatch):
    monkeypatch.setattr(insert_select, "BATCH_ROWS", 3)


def _connect():
    return tesseradb.connect(":memory:", autocommit=True)


def _vectors_table(cur, name="t"):
    cur.execute(f"CREATE TABLE {name} (title string, n int, v float_vector knn_type='hnsw' knn_dims='2' "
                "hnsw_similarity='l2')")


def _fill(cur, name="t", rows=10):
    cur.executemany(f"INSERT INTO {name} (title, n, v) VALUES (?, ?, ?)",
                    [(f"row {i}", i, [i, i % 3]) for i in range(1, rows + 1)])


def _rows(cur, name="t"):
    return cur.execute(f"SELECT id, title, n, v FROM {name} ORDER BY id").fetchall()


def _knn(cur, name="t"):
    return cur.execute(f"SELECT id, knn_dist() FROM {name} WHERE knn(v, 20, (4.2, 1))").fetchall()


@pytest.mark.parametrize("select", [
    "SELECT title, n, v FROM t",
    "SELECT title, n, v FROM (SELECT * FROM t) AS inner_t",
    "SELECT title, n, v FROM t_view",
    "SELECT a.title, a.n, a.v FROM t AS a JOIN t AS b ON a.id = b.id",
])
def test_a_select_of_its_own_table_copies_each_row_once(small_batches, select):
    con = _connect()
    cur = con.cursor()
    _vectors_table(cur)
    _fill(cur)
    cur.execute("CREATE VIEW t_view AS SELECT * FROM t")
    before = _rows(cur)
    cur.execute(f"INSERT INTO t (title, n, v) {select}")
    assert cur.rowcount == 10
    after = _rows(cur)
    assert after[:10] == before
    assert [r[1:] for r in after[10:]] == [r[1:] for r in before]      # the copies, in order, once each
    assert [r[0] for r in after[10:]] == list(range(11, 21))
    assert len(_knn(cur)) == 20
    assert con.db.store.one("SELECT COUNT(*) FROM temp.sqlite_master WHERE name = ?",
                            (insert_select.SOURCE,)) == (0,)       # the TEMP copy is dropped
    con.close()


def test_doubling_a_table_in_place_doubles_it_exactly(small_batches):
    con = _connect()
    cur = con.cursor()
    cur.execute("CREATE TABLE t (n int)")
    cur.executemany("INSERT INTO t (n) VALUES (?)", [(i,) for i in range(7)])
    for size in (14, 28, 56):
        cur.execute("INSERT INTO t (n) SELECT n FROM t")
        assert cur.execute("SELECT COUNT(*), COUNT(DISTINCT id) FROM t").fetchone() == (size, size)
    assert cur.execute("SELECT n, COUNT(*) FROM t GROUP BY n ORDER BY n").fetchall() == [(i, 8) for i in range(7)]


def _duplicate_in_a_late_batch(cur, sql):
    before, hits = _rows(cur, "dst"), _knn(cur, "dst")
    with pytest.raises(tesseradb.IntegrityError) as info:
        cur.execute(sql)
    assert info.value.errno == 1062
    assert _rows(cur, "dst") == before          # the rows of earlier batches are gone
    assert _knn(cur, "dst") == hits             # and the vector index never saw them
    return info.value


@pytest.mark.parametrize("autocommit", [True, False])
def test_a_duplicate_in_a_late_batch_fails_the_whole_statement(small_batches, autocommit):
    con = tesseradb.connect(":memory:", autocommit=autocommit)
    cur = con.cursor()
    _vectors_table(cur, "src")
    _fill(cur, "src")
    cur.execute("CREATE TABLE dst (title string, n int, v float_vector knn_type='hnsw' knn_dims='2' "
                "hnsw_similarity='l2', UNIQUE KEY n_key (n))")
    cur.execute("INSERT INTO dst (title, n, v) VALUES ('kept', 100, (1, 1))")
    con.commit()
    cur.execute("INSERT INTO dst (title, n, v) VALUES ('same transaction', 200, (2, 2))")
    # row 9 repeats an id the first batch wrote; row 8 a unique key the second batch wrote
    err = _duplicate_in_a_late_batch(cur, "INSERT INTO dst (id, title, n, v) "
                                          "SELECT CASE WHEN id = 9 THEN 101 ELSE id + 100 END, title, n, v FROM src")
    assert "'101'" in err.msg
    err = _duplicate_in_a_late_batch(cur, "INSERT INTO dst (title, n, v) "
                                          "SELECT title, CASE WHEN n = 8 THEN 4 ELSE n END, v FROM src")
    assert err.msg.endswith("Duplicate entry '4' for key 'n_key'")
    _duplicate_in_a_late_batch(cur, "INSERT INTO dst (title, n, v) SELECT title, n + 90, v FROM src")  # 100 at row 10
    con.commit()
    assert [r[1] for r in _rows(cur, "dst")] == ["kept", "same transaction"]
    con.close()


def _replace_outcome(monkeypatch, batch_rows):
    monkeypatch.setattr(insert_select, "BATCH_ROWS", batch_rows)
    con = _connect()
    cur = con.cursor()
    cur.execute("CREATE TABLE src (k int, label string)")
    cur.executemany("INSERT INTO src (k, label) VALUES (?, ?)",
                    [(k, f"src{n}") for n, k in enumerate([1, 2, 1, 3, 5, 2, 7, 1, 9, 5])])
    cur.execute("CREATE TABLE dst (k int, label string, UNIQUE KEY k_key (k))")
    cur.executemany("INSERT INTO dst (id, k, label) VALUES (?, ?, ?)", [(50, 5, "old5"), (60, 6, "old6"), (3, 30, "id3")])
    counts = []
    cur.execute("REPLACE INTO dst (k, label) SELECT k, label FROM src")
    counts.append(cur.rowcount)
    cur.execute("REPLACE INTO dst (id, k, label) SELECT id % 4, k + 100, label FROM src")
    counts.append(cur.rowcount)
    table = cur.execute("SELECT id, k, label FROM dst ORDER BY id").fetchall()
    con.close()
    return counts, table


def test_replace_gives_the_same_table_and_counts_across_batch_edges(monkeypatch):
    one = _replace_outcome(monkeypatch, 1000)
    for size in (1, 2, 3):
        assert _replace_outcome(monkeypatch, size) == one
    counts, table = one
    # MySQL's REPLACE: the last row of each key stays; a row counts 1, and 1 more per row it deleted
    assert [r[1:] for r in table if r[1] < 100] == [(6, "old6"), (3, "src3"), (2, "src5"), (7, "src6"),
                                                    (1, "src7"), (9, "src8"), (5, "src9")]
    assert counts[0] == 10 + 1 + 4          # old5 deleted; 1 (x2), 2 and 5 repeated within the statement


def _ids_outcome(monkeypatch, batch_rows):
    monkeypatch.setattr(insert_select, "BATCH_ROWS", batch_rows)
    con = _connect()
    cur = con.cursor()
    cur.execute("CREATE TABLE src (n int)")
    cur.executemany("INSERT INTO src (n) VALUES (?)", [(i,) for i in range(1, 11)])
    cur.execute("CREATE TABLE dst (n int)")
    cur.execute("INSERT INTO dst (id, n) SELECT CASE WHEN n % 3 = 0 THEN 0 WHEN n = 2 THEN NULL "
                "ELSE n * 10 END, n FROM src")
    out = (cur.rowcount, cur.lastrowid, cur.execute("SELECT id, n FROM dst ORDER BY n").fetchall())
    con.close()
    return out


def test_generated_ids_follow_every_explicit_id_of_the_statement_across_batches(monkeypatch):
    one = _ids_outcome(monkeypatch, 1000)
    assert _ids_outcome(monkeypatch, 2) == _ids_outcome(monkeypatch, 3) == one
    assert dict((n, i) for i, n in one[2])[2] == 101       # after id 100, given by the last row


def test_a_bad_value_in_a_late_batch_names_its_row_in_the_statement(small_batches):
    con = _connect()
    cur = con.cursor()
    cur.execute("CREATE TABLE src (n int)")
    cur.executemany("INSERT INTO src (n) VALUES (?)", [(i,) for i in range(1, 11)])
    with pytest.raises(tesseradb.DataError, match="Incorrect integer value: 'x' for column 'id' at row 8"):
        cur.execute("INSERT INTO src (id, n) SELECT CASE WHEN n = 8 THEN 'x' ELSE n + 10 END, n FROM src")
    assert cur.execute("SELECT COUNT(*) FROM src").fetchone() == (10,)


def test_executemany_streams_each_parameter_set(small_batches):
    con = _connect()
    cur = con.cursor()
    cur.execute("CREATE TABLE t (n int)")
    cur.executemany("INSERT INTO t (n) VALUES (?)", [(i,) for i in range(8)])
    cur.executemany("INSERT INTO t (n) SELECT n + ? FROM t WHERE n < 8", [(100,), (200,)])
    assert cur.rowcount == 16
    assert [r[0] for r in cur.execute("SELECT n FROM t ORDER BY id")] == \
        list(range(8)) + [n + 100 for n in range(8)] + [n + 200 for n in range(8)]


def test_the_select_is_read_as_the_batches_are_written(small_batches, monkeypatch):
    con = _connect()
    cur = con.cursor()
    cur.execute("CREATE TABLE src (n int)")
    cur.executemany("INSERT INTO src (n) VALUES (?)", [(i,) for i in range(30)])
    cur.execute("CREATE TABLE dst (n int)")
    read = []
    con.db.store.conn.create_scalar_function("seen", lambda n: read.append(n) or n)
    at_write = []
    real = insert_select.write_rows

    def spy(db, table, columns, rows, **kw):
        at_write.append(len(read))
        return real(db, table, columns, rows, **kw)
    monkeypatch.setattr(insert_select, "write_rows", spy)
    cur.execute("INSERT INTO dst (n) SELECT seen(n) FROM src")
    assert at_write == [4, 7, 10, 13, 16, 19, 22, 25, 28, 30]    # a batch and the row after it
    assert cur.execute("SELECT COUNT(*) FROM dst").fetchone() == (30,)


def test_rows_embedded_in_batches_get_the_vectors_of_single_inserts(small_batches):
    texts = [f"note {i}: the {w} jumps over the lazy dog" for i, w in
             enumerate(["fox", "cat", "bird", "horse", "otter", "crane", "lynx"])]
    con = _connect()
    cur = con.cursor()
    cur.execute("CREATE TABLE src (body text)")
    cur.executemany("INSERT INTO src (body) VALUES (?)", [(t,) for t in texts])
    for name in ("one_by_one", "copied"):
        cur.execute(f"CREATE TABLE {name} (body text, v float_vector knn_type='hnsw' hnsw_similarity='cosine' "
                    f"{MODEL} from='body')")
    for text in texts:
        cur.execute("INSERT INTO one_by_one (body) VALUES (?)", (text,))
    cur.execute("INSERT INTO copied (body) SELECT body FROM src")
    single = cur.execute("SELECT body, v FROM one_by_one ORDER BY id").fetchall()
    streamed = cur.execute("SELECT body, v FROM copied ORDER BY id").fetchall()
    assert [b for b, _ in streamed] == texts
    for (_, a), (_, b) in zip(single, streamed):
        assert a == pytest.approx(b, abs=1e-6)
    query = "SELECT body FROM {} WHERE knn(v, 3, 'a cat on a mat')"
    assert cur.execute(query.format("copied")).fetchall() == cur.execute(query.format("one_by_one")).fetchall()


def test_an_id_the_write_path_would_refuse_is_not_an_explicit_id():
    assert write.explicit_id("12") == 12 and write.explicit_id(0) is None
    assert write.explicit_id(0, zero_generates=False) == 0 and write.explicit_id("x") is None
