"""The notes collection the repository ships (sql_examples/data/notes: runbooks, a journal folder,
decisions, a long handbook page, all with front matter) loaded as documents, the way a user loads a
notes vault: one row per file, front matter keys in their columns, markdown chunks that follow the
headings, and knn finding the page a question is about. The docs examples read the same folder."""
from __future__ import annotations

from pathlib import Path

import pytest

import tesseradb

NOTES = Path(__file__).resolve().parents[2] / "sql_examples" / "data" / "notes"
TABLE = """CREATE TABLE notes (path string UNIQUE, title text, body text, tags json, owner string,
  created string, meta json,
  chunks float_vector_array knn_type='hnsw' hnsw_similarity='cosine'
    model_name='Xenova/all-MiniLM-L6-v2' from='title,body' chunk_strategy='markdown' max_tokens='128')"""


@pytest.fixture(scope="module")
def cur(tmp_path_factory):
    con = tesseradb.connect(str(tmp_path_factory.mktemp("notes") / "notes.db"))
    cur = con.cursor()
    cur.execute(TABLE)
    cur.execute("LOAD DATA INFILE ? INTO TABLE notes", (str(NOTES / "**" / "*.md"),))
    con.commit()
    yield cur
    con.close()


def test_every_note_is_a_row_with_its_front_matter(cur):
    files = sorted(p.relative_to(NOTES).as_posix() for p in NOTES.rglob("*.md"))
    got = cur.execute("SELECT path, title, tags, owner, created FROM notes ORDER BY path").fetchall()
    assert [r[0] for r in got] == files
    by_path = {r[0]: r[1:] for r in got}
    assert by_path["runbooks/disk-full.md"] == ("Disk full on a database host", ["ops", "storage", "runbook", "incident"],
                                                "platform", "2026-03-03")
    assert by_path["journal/2026-10-12.md"][1] == ["journal", "incident"]
    status = cur.execute("SELECT meta FROM notes WHERE path = 'decisions/0003-write-ahead-log.md'").fetchone()[0]
    assert status["status"] == "accepted"                       # a key without a column goes to meta


def test_the_long_page_is_cut_along_its_headings(cur):
    page = cur.execute("SELECT id FROM notes WHERE path = 'handbook/operations-handbook.md'").fetchone()[0]
    chunks = cur.execute(f"SHOW CHUNKS FROM notes.chunks WHERE id = {page}").fetchall()
    names = [d[0] for d in cur.description]
    heading = [dict(zip(names, c))["heading"] for c in chunks]
    assert len(chunks) > 25                                     # a page of some 2,600 words
    assert "Operations handbook > 4. The database > 4.2 Transactions" in heading
    assert "Operations handbook > 3. Incidents > 3.4 The review > What a good follow-up looks like" in heading


@pytest.mark.parametrize("question, page", [
    ("the disk filled up and writes fail with no space left on device", "runbooks/disk-full.md"),
    ("how do I stop a long running report query by its id", "runbooks/kill-query.md"),
    ("the TLS certificate is about to expire", "runbooks/certificate-renewal.md"),
    ("why do readers not wait for the writer", "decisions/0003-write-ahead-log.md"),
])
def test_knn_finds_the_note_a_question_is_about(cur, question, page):
    top = cur.execute("SELECT path FROM notes WHERE knn(chunks, 3, ?) LIMIT 1", (question,)).fetchone()[0]
    assert top == page
