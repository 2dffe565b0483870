"""A statement with much text cuts two texts at once (embed/rows.py ``_cut_all``): the same cuts,
the same chunk locations, warnings in row order, and a bad row is the same error as before."""
from __future__ import annotations

import re
import threading

import pytest

import tesseradb
from tesseradb.embed import rows

PARAGRAPH = ("Replication copies every write to the other nodes of the cluster. A node that falls "
             "behind catches up from the binary log, and a new node starts from a snapshot. ")


def page(n: int) -> str:
    """A markdown page of about 6 KB: headings, paragraphs, a fence; different for every n."""
    parts = [f"# Page {n}\n\n"]
    for s in range(6):
        parts.append(f"## Section {n}.{s}\n\n" + PARAGRAPH * (2 + (n + s) % 4) + f"word{n}x{s} " * 20 + "\n\n")
        if s % 3 == 0:
            parts.append("```sql\nSELECT * FROM t WHERE id = %d;\n```\n\n" % (n * 10 + s))
    return "".join(parts)


PAGES = [page(n) for n in range(24)]        # ~150 KB: above CUT_POOL_CHARS
LONG = "word " * 700                         # over the 510-token window: truncate warns


@pytest.fixture
def con(tmp_path):
    c = tesseradb.connect(str(tmp_path / "t.db"))
    c.cursor().execute("CREATE TABLE docs (body text, v float_vector_array knn_type='hnsw' "
                       "model_name='all-MiniLM-L6-v2' from='body' chunk_strategy='recursive' "
                       "max_tokens='64' overlap_tokens='8')")
    yield c
    c.close()


def test_cuts_in_two_threads_equal_the_cuts_on_one(con):
    assert sum(map(len, PAGES)) >= rows.CUT_POOL_CHARS
    db = con._db
    spec = db.table("docs").vectors["v"]
    model = tesseradb.embed.spec_model(spec)
    seen: set[str] = set()
    inner = rows._cut

    def recording(*args):
        seen.add(threading.current_thread().name)
        return inner(*args)

    rows._cut = recording
    try:
        pooled = rows._cut_all(db, model, spec, PAGES, [None] * len(PAGES))
    finally:
        rows._cut = inner
    alone = [rows.cut_text(model, spec, t) for t in PAGES]
    assert [c.plan for c, _ in pooled] == [c.plan for c in alone]
    assert [loc for _, loc in pooled] == [c.located(t) for c, t in zip(alone, PAGES)]
    assert any(name.startswith("tessera-cut") for name in seen)


def test_a_pooled_statement_warns_in_row_order_and_stores_every_chunk(con):
    cur = con.cursor()
    cur.execute("ALTER TABLE docs ADD COLUMN t float_vector knn_type='hnsw' model_name='all-MiniLM-L6-v2' "
                "from='body' chunk_strategy='truncate'")
    bodies = [*PAGES[:10], LONG + "first", *PAGES[10:], LONG + "second"]
    cur.executemany("INSERT INTO docs (id, body) VALUES (?, ?)", list(enumerate(bodies, start=1)))
    con.commit()
    warned = [m for _, _, m in cur.execute("SHOW WARNINGS").fetchall()]
    ids = [int(re.search(r"\bid (\d+)", m).group(1)) for m in warned if "column 't'" in m]
    assert ids == list(range(1, len(bodies) + 1))      # every text is over the window: each row, in order
    got = dict(cur.execute("SELECT id, LENGTH(v) FROM docs").fetchall())
    db = con._db
    spec = db.table("docs").vectors["v"]
    model = tesseradb.embed.spec_model(spec)
    assert got == {n: len(rows.cut_text(model, spec, b).plan.chunks) for n, b in enumerate(bodies, start=1)}


def test_a_bad_row_in_a_pooled_statement_is_its_error_and_writes_nothing(con):
    cur = con.cursor()
    bodies = [*PAGES[:5], "bad \ud800 text", *PAGES[5:]]
    with pytest.raises(tesseradb.DataError, match="row 6") as info:
        cur.executemany("INSERT INTO docs (id, body) VALUES (?, ?)", list(enumerate(bodies, start=1)))
    assert "valid UTF-8" in str(info.value)
    assert cur.execute("SELECT COUNT(*) FROM docs").fetchone() == (0,)
