"""SHOW CHUNKS (a stored document's chunks) and CALL CHUNKS (a preview of any text), against the
chunker and tokenizer run directly."""
from __future__ import annotations

import pytest

import tesseradb
from tesseradb import embed
from tesseradb.embed import chunking

MODEL = "Xenova/all-MiniLM-L6-v2"
TEXT = ("Le café est servi à huit heures. 東京の天気は晴れです。明日は雨が降るかもしれません。 "
        "Deploy the release 🚀 after the tests pass ✅ and the changelog is written.\n\n"
        "Backups run every night and copy the data volume to the standby host. Restores start from the "
        "newest snapshot in the archive bucket, and the row counts are checked against the backup log.")


@pytest.fixture(scope="module")
def model():
    return embed.get_model(MODEL)


def _expected(model, text, strategy, max_tokens=0, overlap=0, max_chunks=0):
    offsets = model.token_offsets(text)
    plan = chunking.plan_chunks(text, offsets, strategy=strategy, max_tokens=max_tokens, overlap_tokens=overlap,
                                max_chunks=max_chunks, window=model.window)
    rows = []
    for n, c in enumerate(plan.chunks, start=1):
        tokens = sum(1 for s, _ in offsets if c.start <= s < c.end)
        rows.append((n, c.start, c.end, tokens, text[c.start:c.end]))
    return rows


@pytest.mark.parametrize("strategy, numbers", [("recursive", (16, 4)), ("fixed", (12, 3)), ("sentence", (20, 6)),
                                               ("recursive", (16, 0, 3))])
def test_show_chunks_lists_the_stored_spans(cur, model, strategy, numbers):
    names = ("max_tokens", "overlap_tokens", "max_chunks")
    opts = " ".join(f"{k}='{v}'" for k, v in zip(names, numbers))
    cur.execute(f"CREATE TABLE d (title text, body text, v float_vector_array knn_type='hnsw' hnsw_similarity='cosine' "
                f"model_name='{MODEL}' from='title,body' chunk_strategy='{strategy}' {opts})")
    cur.execute("INSERT INTO d (id, title, body) VALUES (1, 'Ops ⚙', ?), (2, 'short', 'text'), (3, 'x', 'y')", [TEXT])
    rows = cur.execute("SHOW CHUNKS FROM d.v WHERE id = ?", [1]).fetchall()
    assert [d[0] for d in cur.description] == ["id", "chunk", "start", "end", "tokens", "text", "heading"]
    expected = _expected(model, "Ops ⚙ " + TEXT, strategy, *numbers)
    if len(numbers) == 3:           # max_chunks: the last chunk runs to the end of the text
        assert len(rows) == 3
        assert rows[-1][3] == len("Ops ⚙ " + TEXT)
        expected = expected[:2]
        rows = rows[:2]
    assert [r[1:6] for r in rows] == expected
    assert {r[6] for r in rows} == {None}          # plain text: no heading path
    assert all(r[0] == 1 for r in rows)
    assert len(rows) == cur.execute("SELECT LENGTH(v) FROM d WHERE id = 1").fetchone()[0] or len(numbers) == 3
    listed = cur.execute("SHOW CHUNKS FROM d.v ORDER BY id DESC LIMIT 2").fetchall()
    assert [r[:2] for r in listed] == [(3, 1), (2, 1)]
    assert listed[1][5] == "short text"


def test_call_chunks_previews_what_a_column_would_store(cur, model):
    for strategy, numbers in [("recursive", (16, 4)), ("sentence", (20, 6)), ("fixed", (12,))]:
        args = ", ".join(str(n) for n in numbers)
        rows = cur.execute(f"CALL CHUNKS(?, '{strategy}', {args})", [TEXT]).fetchall()
        assert [r[:5] for r in rows] == _expected(model, TEXT, strategy, *numbers)
        assert [r[6] for r in rows] == [r[4] for r in rows]      # chunk_context='none': the model reads the chunk
    assert [d[0] for d in cur.description] == ["chunk", "start", "end", "tokens", "text", "heading", "embedded"]
    assert [r[:5] for r in cur.execute("CALL CHUNKS(?, 'sentence', 20, 6, ? AS model_name)", [TEXT, MODEL])] == \
        _expected(model, TEXT, "sentence", 20, 6)


def test_call_chunks_truncate_and_mean_are_one_span(cur, model):
    long = " ".join(["backups and certificates"] * 300)
    offsets = model.token_offsets(long)
    (row,) = cur.execute("CALL CHUNKS(?, 'truncate')", [long]).fetchall()
    assert row[:4] == (1, 0, offsets[model.window - 1][1], model.window)
    (row,) = cur.execute("CALL CHUNKS(?, 'mean', 64)", [long]).fetchall()
    assert row[1:3] == (0, len(long))


def test_show_chunks_of_supplied_vectors_has_no_text(cur):
    cur.execute(f"CREATE TABLE d (body text, v float_vector_array knn_type='hnsw' hnsw_similarity='cosine' "
                f"model_name='{MODEL}' from='body' chunk_strategy='recursive' max_tokens='8')")
    cur.execute("INSERT INTO d (id, body, v) VALUES (1, 'hello', ?)", [[[1.0] * 384, [0.5] * 384]])
    assert cur.execute("SHOW CHUNKS FROM d.v").fetchall() == [(1, 1, None, None, None, None, None),
                                                             (1, 2, None, None, None, None, None)]


@pytest.mark.parametrize("sql, message", [
    ("CALL CHUNKS('x', 'truncate', 16)", "chunk_strategy='truncate' ignores max_tokens"),
    ("CALL CHUNKS('x', 'fixed', 0, 4)", "overlap_tokens requires an explicit non-zero max_tokens"),
    ("CALL CHUNKS('x', 'paragraph')", "unknown chunk_strategy 'paragraph'"),
    ("CALL CHUNKS('x', 'fixed', 'abc')", 'invalid number "abc"'),
    ("CALL CHUNKS('x', 'fixed', -1)", "out of range"),
    ("CALL CHUNKS('x', 'fixed', 8, 1 AS foo)", "unknown option 'foo'"),
    ("CALL CHUNKS('x', 'fixed', 8, 1, 2, 3)", "CALL CHUNKS expects"),
    ("CALL CHUNKS('x', 'fixed', 8, 'nope' AS model_name)", "unknown model 'nope'"),
    ("SHOW CHUNKS FROM d.title", "has no chunks"),
    ("SHOW CHUNKS FROM d.nope", "Unknown column 'nope'"),
    ("SHOW CHUNKS FROM nope.v", "table 'nope' does not exist"),
    ("SHOW CHUNKS FROM d.v WHERE knn(v, 2, 'x')", "knn() belongs in a SELECT"),
    ("SHOW CHUNKS FROM d.v WHERE id IN (SELECT doc_id FROM _tessera_catalog)", "does not exist"),
])
def test_errors(cur, sql, message):
    cur.execute(f"CREATE TABLE d (title text, v float_vector_array knn_type='hnsw' hnsw_similarity='cosine' "
                f"model_name='{MODEL}' from='title' chunk_strategy='fixed' max_tokens='4')")
    with pytest.raises(tesseradb.Error, match=message.replace("(", r"\(").replace(")", r"\)")):
        cur.execute(sql)
