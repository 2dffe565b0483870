"""A cached hybrid_match() SELECT of its table's own rows takes the direct form
(sql/search/hybrid_direct.py): the shown fused documents' rows read by id with knn_direct's cached
statement, no TEMP table. Each query here runs by that path and by the general one (the plan's direct
form taken away), and the rows must be the same: values and their types to the last bit, order
(ties by id), column names, LIMIT/OFFSET windows; shapes that need SQL after fusion never take it;
another connection's writes are seen as the general path sees them."""
from __future__ import annotations

import pytest

import tesseradb

from direct_paths import both, taken  # noqa: F401  (tests/vectors/direct_paths.py; taken: a fixture)

TEXTS = ["cats purr on the sofa", "the stock market fell sharply", "kittens chase yarn across the floor",
         "a cat sleeps in the sun", "dogs bark at cats in the garden", "markets rise on good news",
         "the cat and the dog are friends", "bond yields climb as stocks slide", "a kitten naps on a warm sofa",
         "gardening tips for spring flowers", "how to train a puppy", "cats purr on the sofa"]   # the last: a twin
QUERIES = ["small cat on a sofa", "stock market news", "dog training", "spring garden cat"]


def _table(con) -> None:
    con.execute("CREATE TABLE d (tag int, title string, body text, v float_vector_array knn_type='hnsw' "
                "model_name='all-MiniLM-L6-v2' from='body')")
    con.executemany("INSERT INTO d (id, tag, title, body) VALUES (?, ?, ?, ?)",
                    [(i, i % 3, f"title {i}", text) for i, text in enumerate(TEXTS, 1)])
    con.commit()


DIRECT = [
    "SELECT id FROM d WHERE hybrid_match(?)",
    "SELECT id, hybrid_score(), weight(), knn_dist() FROM d WHERE hybrid_match(?)",
    "SELECT * FROM d WHERE hybrid_match(?) LIMIT 5",
    "SELECT d.*, hybrid_score() AS s FROM d WHERE hybrid_match(?, v) LIMIT 3 OFFSET 2",
    "SELECT title, UPPER(body), id * 2 AS twice, knn_dist(), hybrid_score() FROM d WHERE hybrid_match(?, {k=4}) LIMIT 4",
    "SELECT x.id, x.title, weight() FROM d AS x WHERE hybrid_match(?) LIMIT 2 OFFSET 1",
    "SELECT id, hybrid_score() FROM d WHERE hybrid_match(?) LIMIT 1",
    "SELECT id, hybrid_score() FROM d WHERE hybrid_match(?) LIMIT 20 OFFSET 9",
]


def test_direct_rows_equal_the_general_paths(taken):
    con = tesseradb.connect()
    _table(con)
    con.execute("DELETE FROM d WHERE id = 7")
    con.commit()
    for text in QUERIES:
        for sql in DIRECT:
            direct, general = both(con, sql, (text,), taken)
            assert direct == general, (sql, text)
            assert direct[0] or "OFFSET 9" in sql, (sql, text)
            assert [[type(v) for v in r] for r in direct[0]] == [[type(v) for v in r] for r in general[0]]
    # the twins (1 and 12) tie on every score: the id orders them, on both paths
    direct, general = both(con, "SELECT id, hybrid_score() FROM d WHERE hybrid_match(?)", ("cats purr",), taken)
    ids = [r[0] for r in direct[0]]
    assert direct == general and ids.index(1) + 1 == ids.index(12)
    assert direct[0][ids.index(1)][1] == direct[0][ids.index(12)][1]


GENERAL = [
    "SELECT id FROM d WHERE hybrid_match(?) AND tag = 1",
    "SELECT id, hybrid_score() FROM d WHERE hybrid_match(?) ORDER BY title",
    "SELECT tag, COUNT(*) FROM d WHERE hybrid_match(?) GROUP BY tag",
    "SELECT id, hybrid_score() * 2 FROM d WHERE hybrid_match(?)",
    "SELECT id FROM d WHERE hybrid_match(?) LIMIT ?",
    "SELECT id, knn_chunk() FROM d WHERE hybrid_match(?)",
    "SELECT d.id, e.title FROM d JOIN d AS e ON e.id = d.id WHERE hybrid_match(?)",
]


def test_what_needs_sql_takes_the_general_path(taken):
    con = tesseradb.connect()
    _table(con)
    for sql in GENERAL:
        params = ("cat on a sofa", 3) if sql.endswith("LIMIT ?") else ("cat on a sofa",)
        first = con.execute(sql, params).fetchall()
        assert con.execute(sql, params).fetchall() == first and first, sql
    assert taken[0] == 0


def test_another_connections_writes_are_seen(taken, tmp_path):
    path = str(tmp_path / "db.tessera")
    con = tesseradb.connect(path)
    _table(con)
    other = tesseradb.connect(path)
    sql = "SELECT id, title, hybrid_score() FROM d WHERE hybrid_match(?) LIMIT 4"
    params = ("a kitten asleep on the sofa",)
    con.execute(sql, params).fetchall()
    before = con.execute(sql, params).fetchall()
    assert taken[0] == 1
    other.execute("INSERT INTO d (id, title, body) VALUES (900, 'new', 'a kitten asleep on the sofa')")
    other.commit()
    rows = con.execute(sql, params).fetchall()
    assert rows[0][:2] == (900, "new")
    other.execute("UPDATE d SET title = 'renamed' WHERE id = 900")
    other.commit()
    assert con.execute(sql, params).fetchall()[0][:2] == (900, "renamed")
    other.execute("DELETE FROM d WHERE id = 900")
    other.execute(f"DELETE FROM d WHERE id = {before[0][0]}")
    other.commit()
    after = con.execute(sql, params).fetchall()
    assert 900 not in [r[0] for r in after] and before[0][0] not in [r[0] for r in after]
    assert taken[0] >= 2
    other.execute("DROP TABLE d")
    other.commit()
    with pytest.raises(tesseradb.Error) as seen:
        con.execute(sql, params)
    fresh = tesseradb.connect(path)
    with pytest.raises(tesseradb.Error) as expected:
        fresh.execute(sql, params)
    assert str(seen.value) == str(expected.value) and type(seen.value) is type(expected.value)
    fresh.close()
    con.close()
    other.close()


def test_the_id_alone_reads_no_row_and_sees_writes(taken, tmp_path):
    """``SELECT id`` alone takes the fused documents as its rows (no row read by id); its one read that
    returns no row keeps the catalog check: another connection's commit is seen, and the open
    transaction's own insert and delete show as the general path shows them."""
    path = str(tmp_path / "ids.tessera")
    con = tesseradb.connect(path)
    _table(con)
    other = tesseradb.connect(path)
    sql, params = "SELECT id FROM d WHERE hybrid_match(?) LIMIT 4", ("a kitten asleep on the sofa",)
    con.execute(sql, params).fetchall()
    before = con.execute(sql, params).fetchall()
    assert taken[0] == 1 and con.db.statements.plan_for(con.db.statements.parse(sql).expr).direct.ids_only
    other.execute("INSERT INTO d (id, title, body) VALUES (900, 'new', 'a kitten asleep on the sofa')")
    other.commit()
    assert con.execute(sql, params).fetchall()[0] == (900,)
    other.execute(f"DELETE FROM d WHERE id IN (900, {before[0][0]})")
    other.commit()
    after = con.execute(sql, params).fetchall()
    assert (900,) not in after and before[0] not in after and after[:3] == before[1:]
    con.execute("INSERT INTO d (id, title, body) VALUES (901, 'mine', 'a kitten asleep on the sofa')")
    con.execute(f"DELETE FROM d WHERE id = {after[0][0]}")
    direct, general = both(con, sql, params, taken)
    assert direct == general and direct[0][0] == (901,) and after[0] not in direct[0]
    con.rollback()
    direct, general = both(con, sql, params, taken)
    assert direct == general and direct[0] == after
    con.close()
    other.close()
