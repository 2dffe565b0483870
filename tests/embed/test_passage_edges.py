"""Issue 32, items 1 and 2, through SQL with the real model: the first chunk is content (never the bare
title), chunks start and end between words in every strategy, and a table chunked by an older
release upgrades on REBUILD EMBEDDINGS / MODIFY COLUMN, reusing every chunk whose text is unchanged."""
from __future__ import annotations

import re

import pytest

from tesseradb.embed import markdown_chunks

MODEL = "Xenova/all-MiniLM-L6-v2"
LONG = """# Read-only mode

A table opened read-only refuses every write with ERROR 1290; queries and knn searches run as usual.

## Permissions

```sql
GRANT SELECT ON docs.* TO 'report_user';
SELECT id, knn_dist() FROM docs WHERE knn(chunks, 5, 'rotate the certificate');
```

The server checks the token given by `--token` (a 32-character hex string such as 9abcdef0123)
before it opens the file; http://127.0.0.1:8080/health answers without one.

## Caveats

Long-running exports hold a snapshot: the writer waits until the export ends. Nightly backups run at two,
weekly snapshots stay for three months, and restores start from the newest snapshot in the archive bucket.
Check the row counts afterwards, then re-enable writes with SET GLOBAL read_only = 0 on the primary host.
"""
SHORT = "# Kitchen\n\nThe kitchen closes at six; label your food in the fridge.\n"
STRATEGIES = ("fixed", "recursive", "sentence", "mean", "markdown")


def create(cur, strategy="markdown", context="heading", tokens=48, overlap=12, table="docs"):
    cur.execute(f"CREATE TABLE {table} (title text, body text, v float_vector_array knn_type='hnsw' "
                f"hnsw_similarity='cosine' model_name='{MODEL}' from='title,body' chunk_strategy='{strategy}' "
                f"max_tokens='{tokens}' overlap_tokens='{overlap}' chunk_context='{context}')")
    cur.execute(f"INSERT INTO {table} (id, title, body) VALUES (1, 'Read-only mode', ?), (2, 'Kitchen', ?), "
                "(3, 'Only a title', '')", [LONG, SHORT])


def chunks(cur, table="docs"):
    return cur.execute(f"SHOW CHUNKS FROM {table}.v").fetchall()


def between_words(text: str, pos: int) -> bool:
    return pos <= 0 or pos >= len(text) or text[pos - 1].isspace() or text[pos].isspace()


@pytest.mark.parametrize("context", ["heading", "none"])
def test_no_chunk_is_the_bare_title_and_a_title_only_document_keeps_one_chunk(cur, context):
    create(cur, context=context)
    rows = chunks(cur)
    titles = {1: "Read-only mode", 2: "Kitchen", 3: "Only a title"}
    for doc, title in titles.items():
        texts = [r[5] for r in rows if r[0] == doc]
        assert texts, doc
        if doc == 3:
            assert [t.strip() for t in texts] == ["Only a title"]        # a title alone is still one chunk
        else:
            assert all(t.strip() != title for t in texts), texts
    first = next(r for r in rows if r[0] == 1)
    assert first[5].startswith("Read-only mode\n\n# Read-only mode\n\nA table opened read-only")
    assert first[6] == "Read-only mode"          # its heading path: the first section's
    # the passage functions answer with content, never the title
    for sql in ("SELECT knn_chunk_text() FROM docs WHERE knn(v, 3, 'read-only mode')",
                "SELECT knn_chunk_text() FROM docs WHERE hybrid_match('read-only mode', v) LIMIT 3"):
        for (text,) in cur.execute(sql).fetchall():
            assert text.strip() not in titles.values() or text.strip() == "Only a title"


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("tokens,overlap", [(24, 8), (48, 12), (17, 16)])
def test_every_chunk_starts_and_ends_between_words(cur, strategy, tokens, overlap):
    create(cur, strategy=strategy, tokens=tokens, overlap=overlap, context="none")
    texts = {1: "Read-only mode\n\n" + LONG, 2: "Kitchen\n\n" + SHORT}
    if strategy != "markdown":
        texts = {1: "Read-only mode " + LONG, 2: "Kitchen " + SHORT}
    rows = [r for r in chunks(cur) if r[0] in texts]
    assert len(rows) > (2 if strategy != "mean" else 1)
    for doc, _, start, end, _, text, _ in rows:
        source = texts[doc]
        assert source[start:end] == text
        assert between_words(source, start) and between_words(source, end), (strategy, text)


@pytest.mark.parametrize("statement", [
    "ALTER TABLE docs REBUILD EMBEDDINGS v",
    "ALTER TABLE docs MODIFY COLUMN v float_vector_array knn_type='hnsw' hnsw_similarity='cosine' "
    f"model_name='{MODEL}' from='title,body' chunk_strategy='markdown' max_tokens='48' overlap_tokens='12' "
    "chunk_context='heading'",
])
def test_a_table_chunked_with_a_title_chunk_upgrades_on_rebuild_reusing_unchanged_chunks(con, cur, monkeypatch,
                                                                                       statement):
    with monkeypatch.context() as old_release:            # chunks as the previous release cut them
        old_release.setattr(markdown_chunks, "_lead", lambda text, body, headings: None)
        create(cur)
        con.commit()
    before = chunks(cur)
    assert any(r[0] == 1 and r[5].strip() == "Read-only mode" for r in before)
    cur.execute(statement)
    notes = [m for level, _, m in con.warnings if level == "Note" and "reused" in m]
    after = chunks(cur)
    assert not any(r[5].strip() in ("Read-only mode", "Kitchen") for r in after)
    reused, total, embedded = (int(x.replace(",", "")) for x in
                               re.search(r"([\d,]+) of ([\d,]+) chunks reused.*; ([\d,]+) embedded", notes[-1]).groups())
    # every chunk whose text is unchanged is reused (its context line is too: the title, then the path
    # less a heading that repeats the title); only the chunks that gained the title are embedded
    unchanged = sum(1 for r in after if (r[0], r[5]) in {(b[0], b[5]) for b in before})
    assert total == len(after) and reused == unchanged > 0 and embedded == total - reused
