"""Auto-embedding columns through SQL, with the real all-MiniLM-L6-v2 model."""
from __future__ import annotations

import numpy as np
import pytest

import tesseradb
from tesseradb import embed

MODEL = "Xenova/all-MiniLM-L6-v2"
RUNBOOK = "\n\n".join(
    [f"Step {i}. The nightly backup job copies the data directory of the primary database to the "
     f"standby host, compresses it, and keeps seven days of history in the archive bucket." for i in range(1, 40)]
    + ["Certificates. Replication between the primary and the standby is encrypted with TLS. To rotate "
       "the TLS certificate used for replication, issue a new certificate from the internal CA, install "
       "it on both hosts and restart the replication service."])


def model_table(cur, strategy="recursive", extra="", name="docs", column_type="float_vector_array"):
    cur.execute(f"CREATE TABLE {name} (title text, body text, v {column_type} knn_type='hnsw' "
                f"hnsw_similarity='cosine' model_name='{MODEL}' from='title,body' "
                f"chunk_strategy='{strategy}' {extra})")


@pytest.fixture(scope="module")
def model():
    return embed.get_model(MODEL)


def test_insert_embeds_the_from_columns_joined_by_a_space(cur, model):
    model_table(cur, "truncate", column_type="float_vector")
    cur.execute("INSERT INTO docs (id, title, body) VALUES (1, 'Backup', 'runs nightly')")
    (stored,) = cur.execute("SELECT v FROM docs WHERE id = 1").fetchone()
    expected = model.embed(["Backup runs nightly"])[0]
    assert np.allclose(stored, expected, atol=1e-5)


def test_null_from_column_is_empty_text(cur, model):
    model_table(cur, "truncate", column_type="float_vector")
    cur.execute("INSERT INTO docs (id, title) VALUES (1, 'Backup')")
    (stored,) = cur.execute("SELECT v FROM docs").fetchone()
    assert np.allclose(stored, model.embed(["Backup "])[0], atol=1e-5)


def test_long_text_is_chunked_and_length_counts_chunks(cur):
    model_table(cur, "recursive", "max_tokens='64' overlap_tokens='8'")
    cur.execute("INSERT INTO docs (id, title, body) VALUES (1, 'Backup runbook', ?), (2, 'Short', 'tiny')",
                [RUNBOOK])
    rows = dict(cur.execute("SELECT id, LENGTH(v) FROM docs").fetchall())
    assert rows[1] > 10
    assert rows[2] == 1


@pytest.mark.parametrize("strategy", ["truncate", "mean"])
def test_single_vector_strategies_store_one_vector(cur, strategy):
    model_table(cur, strategy)
    cur.execute("INSERT INTO docs (id, title, body) VALUES (1, 'Backup runbook', ?)", [RUNBOOK])
    assert cur.execute("SELECT LENGTH(v) FROM docs").fetchone() == (1,)


def test_mean_is_the_normalized_average_of_the_chunks(cur, model):
    model_table(cur, "mean", "max_tokens='32'")
    model_table(cur, "recursive", "max_tokens='32'", name="parts")
    cur.execute("INSERT INTO docs (id, title, body) VALUES (1, 'Backup runbook', ?)", [RUNBOOK[:1500]])
    cur.execute("INSERT INTO parts (id, title, body) VALUES (1, 'Backup runbook', ?)", [RUNBOOK[:1500]])
    (mean,) = cur.execute("SELECT v FROM docs").fetchone()
    (parts,) = cur.execute("SELECT v FROM parts").fetchone()
    avg = np.mean(np.array(parts), axis=0)
    assert len(parts) > 1
    assert np.allclose(mean[0], avg / np.linalg.norm(avg), atol=1e-5)


def test_every_chunk_strategy_answers_knn(cur):
    for n, strategy in enumerate(["truncate", "mean", "fixed", "recursive", "sentence"]):
        extra = "" if strategy in ("truncate", "mean") else "max_tokens='48' overlap_tokens='8'"
        model_table(cur, strategy, extra, name=f"t{n}")
        cur.execute(f"INSERT INTO t{n} (id, title, body) VALUES (1, 'Cats', 'Cats sleep most of the day.'), "
                    f"(2, 'Backup', ?)", [RUNBOOK])
        got = cur.execute(f"SELECT id FROM t{n} WHERE knn(v, 1, 'where do cats sleep')").fetchall()
        assert got == [(1,)], strategy


def test_seed_example_truncate_vs_sentence(cur):
    cur.execute(f"""CREATE TABLE pages (title text, body text,
        v_truncate float_vector knn_type='hnsw' hnsw_similarity='cosine' model_name='{MODEL}' from='title,body',
        v_sentence float_vector_array knn_type='hnsw' hnsw_similarity='cosine' model_name='{MODEL}'
            from='title,body' chunk_strategy='sentence' max_tokens='128' overlap_tokens='32')""")
    cur.execute("INSERT INTO pages (id, title, body) VALUES (1, 'Database backup runbook', ?), "
                "(2, 'TLS certificates', 'Our public website uses TLS certificates that renew automatically.'), "
                "(3, 'Kitchen rules', 'Clean the coffee machine on Fridays.'), "
                "(4, 'Holiday calendar', 'The office is closed on public holidays.')", [RUNBOOK])
    question = "how do I rotate the TLS certificates used for replication"
    trunc = cur.execute("SELECT id, knn_dist() FROM pages WHERE knn(v_truncate, 4, ?)", [question]).fetchall()
    sent = cur.execute("SELECT id, knn_dist() FROM pages WHERE knn(v_sentence, 4, ?)", [question]).fetchall()
    assert trunc[0][0] == 2
    assert sent[0][0] == 1
    assert sent[1][1] - sent[0][1] > 0.1      # by a wide margin


def test_truncate_warns_when_text_is_cut(cur):
    model_table(cur, "truncate")
    cur.execute("INSERT INTO docs (id, title, body) VALUES (7, 'Backup runbook', ?)", [RUNBOOK])
    warnings = cur.execute("SHOW WARNINGS").fetchall()
    assert len(warnings) == 1
    level, code, message = warnings[0]
    assert level == "Warning" and "id 7" in message and "column 'v'" in message and "510" in message
    cur.execute("INSERT INTO docs (id, title, body) VALUES (8, 'short', 'text')")
    assert cur.execute("SHOW WARNINGS").fetchall() == []


def test_max_chunks_merge_warns(cur):
    model_table(cur, "fixed", "max_tokens='32' max_chunks='2'")
    cur.execute("INSERT INTO docs (id, title, body) VALUES (1, 'Backup runbook', ?)", [RUNBOOK])
    (warning,) = cur.execute("SHOW WARNINGS").fetchall()
    assert "max_chunks=2" in warning[2] and "id 1" in warning[2]
    assert cur.execute("SELECT LENGTH(v) FROM docs").fetchone() == (2,)


def test_supplied_vectors_are_stored_as_given_never_chunked(cur):
    model_table(cur, "recursive", "max_tokens='16'")
    vec = np.ones(384, dtype=np.float32)
    cur.execute("INSERT INTO docs (id, title, body, v) VALUES (1, 'x', ?, ?)", [RUNBOOK, [vec.tolist()]])
    (stored,) = cur.execute("SELECT v FROM docs").fetchone()
    assert len(stored) == 1
    assert np.allclose(stored[0], vec / np.linalg.norm(vec), atol=1e-6)   # cosine: normalized


def test_supplied_vector_of_wrong_width_on_model_column(cur):
    model_table(cur, "recursive", "max_tokens='16'")
    with pytest.raises(tesseradb.DataError, match="model_name=.* specified, but vector contents with 3 values"):
        cur.execute("INSERT INTO docs (id, v) VALUES (1, [[1, 2, 3]])")


def test_replace_recomputes(cur):
    model_table(cur, "truncate")
    cur.execute("INSERT INTO docs (id, title, body) VALUES (1, 'Cats', 'Cats sleep.'), (2, 'Dogs', 'Dogs bark.')")
    assert cur.execute("SELECT id FROM docs WHERE knn(v, 1, 'a sleeping cat')").fetchall() == [(1,)]
    cur.execute("REPLACE INTO docs (id, title, body) VALUES (1, 'Trains', 'Trains run on rails.')")
    assert cur.execute("SELECT id FROM docs WHERE knn(v, 1, 'a sleeping cat')").fetchall() == [(2,)]
    assert cur.execute("SELECT id FROM docs WHERE knn(v, 1, 'railway')").fetchall() == [(1,)]


def test_update_of_a_from_column_recomputes(con, cur):
    model_table(cur, "recursive", "max_tokens='32'")
    cur.execute("INSERT INTO docs (id, title, body) VALUES (1, 'Cats', 'Cats sleep.'), (2, 'Dogs', 'Dogs bark.')")
    con.commit()
    cur.execute("UPDATE docs SET body = 'Trains run on rails.', title = 'Trains' WHERE id = 1")
    assert cur.rowcount == 1
    assert cur.execute("SELECT id FROM docs WHERE knn(v, 1, 'railway')").fetchall() == [(1,)]
    con.commit()
    assert cur.execute("SELECT id FROM docs WHERE knn(v, 1, 'railway')").fetchall() == [(1,)]
    assert cur.execute("SELECT id FROM docs WHERE knn(v, 1, 'a sleeping cat')").fetchall() == [(2,)]


def test_empty_text_gives_one_vector_and_empty_query_is_valid(cur):
    model_table(cur, "sentence", "max_tokens='32'")
    cur.execute("INSERT INTO docs (id, title, body) VALUES (1, '', '')")
    assert cur.execute("SELECT LENGTH(v) FROM docs").fetchone() == (1,)
    assert cur.execute("SELECT id FROM docs WHERE knn(v, 5, '')").fetchall() == [(1,)]


def test_text_query_on_a_column_without_model(cur):
    cur.execute("CREATE TABLE t (v float_vector knn_type='hnsw' knn_dims='2' hnsw_similarity='l2')")
    with pytest.raises(tesseradb.ProgrammingError, match="Embeddings generation string specified, but embeddings are not loaded"):
        cur.execute("SELECT id FROM t WHERE knn(v, 1, 'hello')")


def test_unknown_model_is_an_error_at_create_and_creates_nothing(cur):
    with pytest.raises(tesseradb.ProgrammingError) as err:
        cur.execute("CREATE TABLE t (title text, v float_vector knn_type='hnsw' model_name='no/such-model' "
                    "from='title')")
    assert err.value.errno == 1064 and "no/such-model" in err.value.msg
    assert cur.execute("SHOW TABLES").fetchall() == []


@pytest.mark.parametrize("definition, message", [
    ("n int chunk_strategy='sentence'", "can only be used with float_vector and float_vector_array"),
    ("v float_vector_array chunk_strategy='sentence'", "require knn_type='hnsw'"),
    ("v float_vector_array knn_type='hnsw' knn_dims='4' hnsw_similarity='l2' chunk_strategy='sentence'",
     "require model_name; explicitly supplied vectors are never chunked"),
    (f"v float_vector_array knn_type='hnsw' model_name='{MODEL}' from='title' max_tokens='128'",
     "max_tokens, overlap_tokens and max_chunks require chunk_strategy"),
    (f"v float_vector_array knn_type='hnsw' model_name='{MODEL}' from='title' chunk_strategy='truncate' "
     "max_tokens='128'", "chunk_strategy='truncate' ignores max_tokens, overlap_tokens and max_chunks"),
    (f"v float_vector knn_type='hnsw' model_name='{MODEL}' from='title' chunk_strategy='sentence' "
     "max_tokens='128'", "chunk_strategy='sentence' produces several vectors per document and requires a "
                         "float_vector_array attribute"),
    (f"v float_vector_array knn_type='hnsw' model_name='{MODEL}' from='title' chunk_strategy='fixed' "
     "overlap_tokens='16'", "overlap_tokens requires an explicit non-zero max_tokens"),
    (f"v float_vector_array knn_type='hnsw' model_name='{MODEL}' from='title' chunk_strategy='paragraph'",
     "unknown chunk_strategy 'paragraph'; expected truncate, mean, fixed, recursive, sentence or markdown"),
    (f"v float_vector_array knn_type='hnsw' model_name='{MODEL}'", "'from' setting empty for KNN attribute 'v'"),
    (f"v float_vector_array knn_type='hnsw' model_name='{MODEL}' from='nope'", "embedding source 'nope' not found"),
    (f"v float_vector_array knn_type='hnsw' model_name='{MODEL}' knn_dims='384' from='title'",
     "knn_dims can't be used together with model_name"),
    (f"v float_vector_array knn_type='hnsw' model_name='{MODEL}' from='title' chunk_strategy='fixed' "
     "max_tokens='abc'", 'invalid number "abc"'),
])
def test_definition_rules_at_create(cur, definition, message):
    with pytest.raises(tesseradb.ProgrammingError) as err:
        cur.execute(f"CREATE TABLE t (title text, {definition})")
    assert err.value.errno == 1064 and err.value.sqlstate == "42000"
    assert message in err.value.msg
    assert cur.execute("SHOW TABLES").fetchall() == []


def test_unquoted_numbers_are_accepted(cur):
    model_table(cur, "fixed", "max_tokens=100 overlap_tokens=50")
    (ddl,) = [r[1] for r in cur.execute("SHOW CREATE TABLE docs").fetchall()]
    assert "chunk_strategy='fixed' max_tokens='100' overlap_tokens='50'" in ddl


def test_show_create_table_recreates_the_table(cur):
    model_table(cur, "sentence", "max_tokens='64' overlap_tokens='8' max_chunks='16'")
    (ddl,) = [r[1] for r in cur.execute("SHOW CREATE TABLE docs").fetchall()]
    cur.execute("DROP TABLE docs")
    cur.execute(ddl)
    assert cur.execute("SHOW CREATE TABLE docs").fetchall()[0][1] == ddl


def test_alter_add_model_column_embeds_existing_rows(cur):
    cur.execute("CREATE TABLE notes (body text)")
    cur.execute("INSERT INTO notes (id, body) VALUES (1, 'Cats sleep.'), (2, 'Trains run on rails.')")
    cur.execute(f"ALTER TABLE notes ADD COLUMN v float_vector_array knn_type='hnsw' model_name='{MODEL}' "
                "from='body' chunk_strategy='sentence' max_tokens='64'")
    assert cur.execute("SELECT id FROM notes WHERE knn(v, 1, 'railway')").fetchall() == [(2,)]
    cur.execute("INSERT INTO notes (id, body) VALUES (3, 'Kittens purr.')")
    assert cur.execute("SELECT id FROM notes WHERE knn(v, 2, 'cat')").fetchall()[0][0] in (1, 3)


def test_executemany_embeds_each_row(con, cur, model):
    model_table(cur, "truncate", column_type="float_vector")
    rows = [(i, f"title {i}", f"body number {i}") for i in range(1, 21)]
    cur.executemany("INSERT INTO docs (id, title, body) VALUES (?, ?, ?)", rows)
    assert cur.rowcount == 20
    stored = dict(cur.execute("SELECT id, v FROM docs").fetchall())
    expected = model.embed([f"title {i} body number {i}" for i in range(1, 21)])
    for i in range(1, 21):
        assert np.allclose(stored[i], expected[i - 1], atol=1e-5)


def test_model_columns_survive_reopen(db_path):
    con = tesseradb.connect(db_path)
    cur = con.cursor()
    model_table(cur, "recursive", "max_tokens='32'")
    cur.execute("INSERT INTO docs (id, title, body) VALUES (1, 'Cats', 'Cats sleep.'), (2, 'Trains', 'Trains run.')")
    con.commit()
    con.close()
    con = tesseradb.connect(db_path)
    assert con.execute("SELECT id FROM docs WHERE knn(v, 1, 'railway')").fetchall() == [(2,)]
    con.close()
