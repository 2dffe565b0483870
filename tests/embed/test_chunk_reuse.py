"""Chunk-level embedding reuse and ALTER TABLE ... MODIFY COLUMN, with the real model.

A spy on the model records every text it is asked to embed, so each test states exactly which chunk
texts had to be embedded; stored vectors are compared bit for bit with a fresh embedding."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

import tesseradb
from tesseradb import embed
from tesseradb.embed import chunking

MODEL = "Xenova/all-MiniLM-L6-v2"
PARAGRAPHS = [
    "Backups run every night at two and are kept for seven days; weekly snapshots stay for three months.",
    "Restores start from the newest snapshot in the archive bucket. Check the row counts afterwards.",
    "The primary and the standby replicate over TLS. Rotate the certificate before it expires each year.",
    "Disk alerts fire when free space drops below twenty percent: vacuum the largest tables first.",
    "Minor versions are installed on Tuesdays: upgrade the standby, fail over, then upgrade the primary.",
    "Le café est servi à huit heures. 東京の天気は晴れです。 Deploy 🚀 after the tests pass.",
]
BODY = "\n\n".join(PARAGRAPHS)
EDITED = "\n\n".join(PARAGRAPHS[:3] + ["A new paragraph: the on-call engineer is paged when replication lags."]
                     + PARAGRAPHS[3:])
SMALLER = "max_tokens='16'"
COLUMN = ("v float_vector_array knn_type='hnsw' hnsw_similarity='cosine' model_name='{model}' from='title,body' "
          "chunk_strategy='{strategy}' {numbers}")


def column(strategy="recursive", numbers="max_tokens='24' overlap_tokens='0'", name="v"):
    return COLUMN.format(model=MODEL, strategy=strategy, numbers=numbers).replace("v float", f"{name} float", 1)


@pytest.fixture(scope="module")
def model():
    return embed.get_model(MODEL)


@pytest.fixture
def spy(model, monkeypatch):
    """Every text the model embeds, in order."""
    seen: list[str] = []
    real = model.embed

    def embed_and_record(texts, **kw):
        seen.extend(texts)
        return real(texts, **kw)

    monkeypatch.setattr(model, "embed", embed_and_record)
    return seen


def pieces(model, text, strategy="recursive", max_tokens=24, overlap=0, max_chunks=0):
    plan = chunking.plan_chunks(text, model.token_offsets(text), strategy=strategy, max_tokens=max_tokens,
                                overlap_tokens=overlap, max_chunks=max_chunks, window=model.window)
    return [text[c.start:c.end] for c in plan.chunks]


def stored(cur, doc_id, col="v", table="docs"):
    (value,) = cur.execute(f"SELECT {col} FROM {table} WHERE id = ?", [doc_id]).fetchone()
    return np.asarray(value, dtype=np.float32)


def reuse_note(con):
    notes = [m for level, code, m in con.warnings if level == "Note" and "reused" in m]
    if not notes:
        return None
    reused, total, embedded = re.search(r"([\d,]+) of ([\d,]+) chunks reused.*; ([\d,]+) embedded", notes[-1]).groups()
    return tuple(int(x.replace(",", "")) for x in (reused, total, embedded))


@pytest.fixture
def docs(cur):
    cur.execute(f"CREATE TABLE docs (title text, body text, {column()})")
    return cur


def test_the_same_text_again_is_not_embedded_and_is_bit_identical(con, docs, model, spy):
    docs.execute("INSERT INTO docs (id, title, body) VALUES (1, 'Ops', ?)", [BODY])
    expected = pieces(model, "Ops " + BODY)
    assert spy == expected and reuse_note(con) is None
    spy.clear()
    docs.execute("INSERT INTO docs (id, title, body) VALUES (2, 'Ops', ?)", [BODY])
    assert spy == []
    assert reuse_note(con) == (len(expected), len(expected), 0)
    fresh = model.embed(expected)
    assert np.array_equal(stored(docs, 2), fresh) and np.array_equal(stored(docs, 1), fresh)


def test_replace_embeds_only_the_new_chunks(con, docs, model, spy):
    docs.execute("INSERT INTO docs (id, title, body) VALUES (1, 'Ops', ?)", [BODY])
    before = set(pieces(model, "Ops " + BODY))
    spy.clear()
    docs.execute("REPLACE INTO docs (id, title, body) VALUES (1, 'Ops', ?)", [EDITED])
    after = pieces(model, "Ops " + EDITED)
    new = [p for p in dict.fromkeys(after) if p not in before]
    assert 0 < len(new) < len(after)
    assert spy == new
    assert reuse_note(con) == (len(after) - len(new), len(after), len(new))
    assert np.array_equal(stored(docs, 1), model.embed(after))


def test_update_of_a_source_column_and_a_statement_with_repeats(con, docs, model, spy):
    docs.execute("INSERT INTO docs (id, title, body) VALUES (1, 'Ops', ?), (2, 'Ops', ?), (3, 'Other', 'x')",
                 [BODY, BODY])
    assert spy == pieces(model, "Ops " + BODY) + ["Other x"]          # the second copy: no model call
    spy.clear()
    docs.execute("UPDATE docs SET body = ? WHERE id IN (1, 2)", [EDITED])
    after = pieces(model, "Ops " + EDITED)
    new = [p for p in dict.fromkeys(after) if p not in set(pieces(model, "Ops " + BODY))]
    assert spy == new
    assert reuse_note(con) == (2 * len(after) - len(new), 2 * len(after), len(new))
    assert np.array_equal(stored(docs, 2), model.embed(after))


def test_load_data_replace_reuses(con, docs, model, spy, tmp_path):
    docs.execute("INSERT INTO docs (id, title, body) VALUES (1, 'Ops', ?), (2, 'Kitchen', 'Label your food.')", [BODY])
    path = tmp_path / "sync.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in [{"id": 1, "title": "Ops", "body": EDITED},
                                                      {"id": 2, "title": "Kitchen", "body": "Label your food."}]))
    spy.clear()
    docs.execute(f"LOAD DATA INFILE '{path}' REPLACE INTO TABLE docs")
    after = pieces(model, "Ops " + EDITED)
    new = [p for p in dict.fromkeys(after) if p not in set(pieces(model, "Ops " + BODY))]
    assert spy == new
    assert np.array_equal(stored(docs, 1), model.embed(after))


def test_alter_add_column_and_rebuild_reuse(con, docs, model, spy):
    docs.execute("INSERT INTO docs (id, title, body) VALUES (1, 'Ops', ?)", [BODY])
    spy.clear()
    docs.execute(f"ALTER TABLE docs ADD COLUMN {column(name='w')}")
    assert spy == []
    assert np.array_equal(stored(docs, 1, "w"), stored(docs, 1, "v"))
    docs.execute("ALTER TABLE docs REBUILD EMBEDDINGS v")
    assert spy == []
    assert np.array_equal(stored(docs, 1, "v"), model.embed(pieces(model, "Ops " + BODY)))


def test_rollback_removes_the_mapping(con, docs, model, spy):
    docs.execute("BEGIN")
    docs.execute("INSERT INTO docs (id, title, body) VALUES (1, 'Ops', ?)", [BODY])
    docs.execute("ROLLBACK")
    spy.clear()
    docs.execute("INSERT INTO docs (id, title, body) VALUES (2, 'Ops', ?)", [BODY])
    assert spy == pieces(model, "Ops " + BODY)
    assert reuse_note(con) is None


def test_supplied_vectors_and_mean_averages_are_never_reused(con, cur, model, spy):
    mean = column("mean", numbers="max_tokens='16'", name="m")
    cur.execute(f"CREATE TABLE docs (title text, body text, {column()}, {mean})")
    ones = [[1.0] * 384] * len(pieces(model, "Ops " + BODY))
    cur.execute("INSERT INTO docs (id, title, body, v) VALUES (1, 'Ops', ?, ?)", [BODY, ones])
    spy.clear()
    cur.execute(f"ALTER TABLE docs ADD COLUMN {column('truncate', numbers='', name='t')}")
    assert spy == ["Ops " + BODY]                       # the mean vector is an average, not this text's
    cur.execute("INSERT INTO docs (id, title, body) VALUES (2, 'Ops', ?)", [BODY])
    assert np.array_equal(stored(cur, 2), model.embed(pieces(model, "Ops " + BODY)))   # not the ones


# -- ALTER TABLE ... MODIFY COLUMN ---------------------------------------------------------------
def _state(cur):
    return (cur.execute("SHOW CREATE TABLE docs").fetchall(), cur.execute("SHOW CHUNKS FROM docs.v").fetchall(),
            [stored(cur, i).tobytes() for (i,) in cur.execute("SELECT id FROM docs ORDER BY id").fetchall()])


@pytest.fixture
def loaded(con, docs):
    docs.execute("INSERT INTO docs (id, title, body) VALUES (1, 'Ops', ?), (2, 'Ops 2', ?), (3, 'Kitchen', ?)",
                 [BODY, EDITED, "Label your food in the fridge."])
    con.commit()
    return docs


def test_modify_rechunks_reusing_what_it_can(con, loaded, model, spy):
    cur = loaded
    old = {p for title, body in [("Ops", BODY), ("Ops 2", EDITED), ("Kitchen", "Label your food in the fridge.")]
           for p in pieces(model, f"{title} {body}")}
    spy.clear()
    cur.execute(f"ALTER TABLE docs MODIFY COLUMN {column(numbers=SMALLER)}")
    assert cur.rowcount == 3
    texts = {1: "Ops " + BODY, 2: "Ops 2 " + EDITED, 3: "Kitchen Label your food in the fridge."}
    after = {i: pieces(model, t, max_tokens=16) for i, t in texts.items()}
    flat = [p for i in sorted(after) for p in after[i]]
    new = [p for p in dict.fromkeys(flat) if p not in old]
    assert spy == new and len(new) < len(flat)
    assert reuse_note(con) == (len(flat) - len(new), len(flat), len(new))
    (_, ddl), = cur.execute("SHOW CREATE TABLE docs").fetchall()
    assert "chunk_strategy='recursive' max_tokens='16' overlap_tokens='0'" in ddl
    for i, expected in after.items():
        assert np.array_equal(stored(cur, i), model.embed(expected))
        assert [r[5] for r in cur.execute("SHOW CHUNKS FROM docs.v WHERE id = ?", [i]).fetchall()] == expected
    con.commit()
    hit = cur.execute("SELECT id, knn_chunk_text() FROM docs WHERE knn(v, 1, 'label food in the fridge')").fetchone()
    assert hit == (3, "Kitchen Label your food in the fridge.")


def test_modify_to_the_same_settings_embeds_nothing(con, loaded, spy):
    before = _state(loaded)
    spy.clear()
    loaded.execute(f"ALTER TABLE docs MODIFY {column()}")
    assert spy == [] and _state(loaded) == before


def test_modify_is_one_transaction_and_an_interrupt_changes_nothing(con, loaded):
    before = _state(loaded)
    con.set_progress(lambda done, total: con.interrupt())
    with pytest.raises(tesseradb.OperationalError, match="interrupted"):
        loaded.execute(f"ALTER TABLE docs MODIFY COLUMN {column('fixed', numbers=SMALLER)}")
    con.set_progress(None)
    assert _state(loaded) == before
    hit = loaded.execute("SELECT id FROM docs WHERE knn(v, 1, 'label food in the fridge')").fetchone()
    assert hit == (3,)


RULES = [
    ("title text chunk_strategy='fixed'",
     "chunk_strategy, max_tokens, overlap_tokens and max_chunks can only be used with float_vector and float_vector_array attributes"),
    ("v float_vector_array chunk_strategy='fixed'",
     "chunk_strategy, max_tokens, overlap_tokens and max_chunks require knn_type='hnsw'"),
    ("v float_vector_array knn_type='hnsw' knn_dims='4' hnsw_similarity='l2' chunk_strategy='fixed'",
     "require model_name; explicitly supplied vectors are never chunked"),
    (f"v float_vector_array knn_type='hnsw' model_name='{MODEL}' from='title' max_tokens='8'",
     "max_tokens, overlap_tokens and max_chunks require chunk_strategy"),
    (f"v float_vector_array knn_type='hnsw' model_name='{MODEL}' from='title' chunk_strategy='truncate' max_tokens='8'",
     "chunk_strategy='truncate' ignores max_tokens, overlap_tokens and max_chunks"),
    (f"v float_vector knn_type='hnsw' model_name='{MODEL}' from='title' chunk_strategy='sentence'",
     "chunk_strategy='sentence' produces several vectors per document and requires a float_vector_array attribute"),
    (f"v float_vector_array knn_type='hnsw' model_name='{MODEL}' from='title' chunk_strategy='fixed' overlap_tokens='4'",
     "overlap_tokens requires an explicit non-zero max_tokens"),
    (f"v float_vector_array knn_type='hnsw' model_name='{MODEL}' from='title' chunk_strategy='paragraph'",
     "unknown chunk_strategy 'paragraph'"),
    (f"v float_vector_array knn_type='hnsw' model_name='{MODEL}' from='nope' chunk_strategy='fixed' max_tokens='8'",
     "embedding source 'nope' not found"),
    (f"v float_vector knn_type='hnsw' model_name='{MODEL}' from='title'", "cannot change the type"),
    ("v float_vector_array knn_type='hnsw' knn_dims='4' hnsw_similarity='l2'", "re-chunks a model-backed KNN column"),
    (f"nope float_vector_array knn_type='hnsw' model_name='{MODEL}' from='title'", "Unknown column 'nope'"),
]


@pytest.mark.parametrize("definition, message", RULES)
def test_modify_applies_the_create_table_rules(loaded, definition, message):
    before = _state(loaded)
    with pytest.raises(tesseradb.Error, match=re.escape(message)):
        loaded.execute(f"ALTER TABLE docs MODIFY COLUMN {definition}")
    assert _state(loaded) == before


def test_modify_survives_reopening_the_file(db_path, model):
    con = tesseradb.connect(db_path)
    cur = con.cursor()
    cur.execute(f"CREATE TABLE docs (title text, body text, {column()})")
    cur.execute("INSERT INTO docs (id, title, body) VALUES (1, 'Ops', ?), (2, 'Kitchen', 'Label your food.')", [BODY])
    con.commit()
    cur.execute("SELECT id FROM docs WHERE knn(v, 1, 'food')").fetchall()          # the index file exists
    cur.execute(f"ALTER TABLE docs MODIFY COLUMN {column('sentence', numbers=SMALLER)}")
    con.commit()
    assert cur.execute("CHECK TABLE docs").fetchall()[-1][-1] == "OK"       # index, chunk rows, vectors agree
    con.close()
    con = tesseradb.connect(db_path)
    cur = con.cursor()
    (_, ddl), = cur.execute("SHOW CREATE TABLE docs").fetchall()
    assert "chunk_strategy='sentence' max_tokens='16'" in ddl
    assert cur.execute("SELECT LENGTH(v) FROM docs WHERE id = 1").fetchone() == \
        (len(pieces(model, "Ops " + BODY, "sentence", 16)),)
    assert cur.execute("SELECT id, knn_chunk() FROM docs WHERE knn(v, 1, 'label your food')").fetchone() == (2, 1)
    assert cur.execute("SELECT id FROM docs WHERE knn(v, 1, 'rotate the certificate')").fetchone() == (1,)
    con.close()


def test_progress_counts_reused_chunks_as_done(con, docs, model):
    docs.execute("INSERT INTO docs (id, title, body) VALUES (1, 'Ops', ?)", [BODY])
    reports: list[tuple[int, int]] = []
    con.set_progress(lambda done, total: reports.append((done, total)))
    docs.execute("REPLACE INTO docs (id, title, body) VALUES (1, 'Ops', ?)", [EDITED])
    con.set_progress(None)
    after = pieces(model, "Ops " + EDITED)
    new = [p for p in dict.fromkeys(after) if p not in set(pieces(model, "Ops " + BODY))]
    assert reports[-1] == (len(after), len(after))
    assert reports[0][0] >= len(after) - len(new)


def test_the_key_is_the_model_and_the_exact_text():
    from tesseradb.embed.reuse import chunk_key
    assert chunk_key("model-a", "Backups run nightly.") == chunk_key("model-a", "Backups run nightly.")
    assert chunk_key("model-a", "Backups run nightly.") != chunk_key("model-b", "Backups run nightly.")
    assert chunk_key("model-a", "Backups run nightly.") != chunk_key("model-a", "Backups run nightly. ")
    assert len(chunk_key("m", "東京 🚀")) == 32
