"""Models in the sentence-transformers layout: pooling, normalisation, prompts, dims, window, and a
safetensors-only BERT — the engine's vectors against an independent reference (st_models.reference)."""
from __future__ import annotations

import json

import numpy as np
import pytest

import st_models  # tests/embed/st_models.py
import tesseradb
from tesseradb import embed

DOCS = ["the cat sat on the mat", "backup and restore the database", "rotate the certificate of the server",
        "a vector search of the table index"]
QUERY = "restore a database backup"
E5 = {"query": "query: ", "passage": "passage: "}


def _vectors(con, table="t"):
    return np.array([r[0] for r in con.execute(f"SELECT v FROM {table} ORDER BY id").fetchall()], np.float32)


def _table(con, folder, extra="", table="t"):
    con.execute(f"CREATE TABLE {table} (body text, v float_vector knn_type='hnsw' hnsw_similarity='cosine' "
                f"model_name='{folder}' from='body' {extra})")
    con.executemany(f"INSERT INTO {table} (id, body) VALUES (?, ?)", list(enumerate(DOCS, 1)))


@pytest.mark.parametrize("pooling", ["mean", "cls", "max", "lasttoken"])
@pytest.mark.parametrize("prompts", [None, E5], ids=["no-prompts", "e5-prompts"])
def test_vectors_follow_the_folders_pooling_and_prompts(tmp_path, pooling, prompts):
    folder = st_models.build(tmp_path / "m", pooling=pooling, prompts=prompts)
    con = tesseradb.connect()
    _table(con, folder)
    doc_prefix, query_prefix = (prompts or {}).get("passage", ""), (prompts or {}).get("query", "")
    expected = np.array([st_models.reference(folder, d, pooling=pooling, prefix=doc_prefix) for d in DOCS])
    np.testing.assert_allclose(_vectors(con), expected, atol=1e-5)
    query = embed.get_model(str(folder)).embed_query(QUERY)
    np.testing.assert_allclose(query, st_models.reference(folder, QUERY, pooling=pooling, prefix=query_prefix),
                               atol=1e-5)


def test_a_model_without_normalize_gives_raw_vectors(tmp_path):
    folder = st_models.build(tmp_path / "m", pooling="cls", normalize=False)
    con = tesseradb.connect()
    _table(con, folder)
    got = _vectors(con)
    np.testing.assert_allclose(got, [st_models.reference(folder, d, pooling="cls", normalize=False) for d in DOCS],
                               rtol=1e-5, atol=1e-5)
    assert not np.allclose(np.linalg.norm(got, axis=1), 1.0)


def test_column_options_override_the_folder(tmp_path):
    folder = st_models.build(tmp_path / "m", pooling="mean", prompts=E5)
    con = tesseradb.connect()
    _table(con, folder, "pooling='max' query_prefix='represent this sentence: ' document_prefix='' dims='16'")
    expected = [st_models.reference(folder, d, pooling="max", dims=16) for d in DOCS]
    np.testing.assert_allclose(_vectors(con), expected, atol=1e-5)
    query = st_models.reference(folder, QUERY, pooling="max", dims=16, prefix="represent this sentence: ")
    expected_order = list(np.argsort(1 - np.array(expected) @ query) + 1)
    hits = con.execute(f"SELECT id FROM t WHERE knn(v, 4, '{QUERY}') ORDER BY knn_dist()").fetchall()
    assert [h[0] for h in hits] == expected_order       # the query read with its own prefix
    spec = con.execute("SHOW CREATE TABLE t").fetchall()[0][1]
    assert "pooling='max'" in spec and "dims='16'" in spec and "query_prefix='represent this sentence: '" in spec


def test_dims_above_the_width_is_refused(tmp_path):
    folder = st_models.build(tmp_path / "m")
    con = tesseradb.connect()
    with pytest.raises(tesseradb.ProgrammingError, match=r"dims=33 is above the width .* \(32\)"):
        _table(con, folder, "dims='33'")
    assert con.execute("SHOW TABLES").fetchall() == []


def test_a_safetensors_only_bert_is_built_into_a_graph(tmp_path, cache_dir):
    folder = st_models.build(tmp_path / "m", pooling="cls", layout="safetensors", prompts=E5)
    assert not (folder / "model.onnx").exists() and not (folder / "onnx").exists()
    con = tesseradb.connect()
    _table(con, folder)
    expected = [st_models.reference(folder, d, pooling="cls", prefix="passage: ") for d in DOCS]
    np.testing.assert_allclose(_vectors(con), expected, atol=1e-5)
    assert list((cache_dir / "models" / "local").glob("*.onnx"))      # built once, cached


def test_the_window_follows_max_seq_length_and_the_prompt(tmp_path):
    folder = st_models.build(tmp_path / "m", max_seq_length=16, prompts={"query": "query: ", "passage": "passage: "})
    model = embed.get_model(str(folder))
    passage_tokens = 3                              # "passage", ":" ... as the tokenizer cuts "passage: "
    assert model.window == 16 - 2 - len(model._tokenizer.encode("passage: ", add_special_tokens=False).ids)
    assert passage_tokens >= 2
    long = " ".join(DOCS * 3)
    got = model.embed([long])[0]
    np.testing.assert_allclose(got, st_models.reference(folder, long, prefix="passage: ", window=14), atol=1e-5)


def test_changing_a_prefix_changes_the_fingerprint_and_modify_column_re_embeds(tmp_path):
    folder = st_models.build(tmp_path / "m")
    con = tesseradb.connect()
    _table(con, folder)
    before = _vectors(con)
    con.execute(f"ALTER TABLE t MODIFY COLUMN v float_vector knn_type='hnsw' hnsw_similarity='cosine' "
                f"model_name='{folder}' from='body' document_prefix='passage: '")
    after = _vectors(con)
    np.testing.assert_allclose(after, [st_models.reference(folder, d, prefix="passage: ") for d in DOCS], atol=1e-5)
    assert not np.allclose(before, after)
    plain = embed.resolve(str(folder))
    prefixed = embed.resolve(str(folder), embed.ModelOptions(document_prefix="passage: "))
    assert plain.fingerprint != prefixed.fingerprint


def test_a_folder_without_sentence_transformers_files_keeps_its_old_fingerprint(tmp_path):
    folder = st_models.build(tmp_path / "m", sentence_transformers=False)
    info = embed.resolve(str(folder))
    from tesseradb.embed.integrity import sha256_bytes, sha256_file
    old = sha256_bytes(json.dumps({
        "onnx_sha256": sha256_file(folder / "onnx" / "model.onnx"), "tokenizer_sha256": sha256_file(folder / "tokenizer.json"),
        "pooling": "mean", "normalize": "l2", "window": 62}, sort_keys=True).encode())
    assert info.fingerprint == old


def test_unsupported_pooling_names_what_to_do(tmp_path):
    folder = st_models.build(tmp_path / "m")
    (folder / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode_weightedmean_tokens": True}))
    with pytest.raises(embed.ModelError, match="pooling_mode_weightedmean_tokens.*pooling='...'"):
        embed.resolve(str(folder))
    con = tesseradb.connect()
    _table(con, folder, "pooling='mean'")          # the column option says how
    np.testing.assert_allclose(_vectors(con), [st_models.reference(folder, d) for d in DOCS], atol=1e-5)


def test_show_models_lists_the_folder_model_a_column_uses(tmp_path):
    folder = st_models.build(tmp_path / "m", pooling="cls", prompts=E5, max_seq_length=32)
    con = tesseradb.connect()
    _table(con, folder, "dims='16'")
    cur = con.execute("SHOW MODELS")
    names = [d[0] for d in cur.description]
    rows = [dict(zip(names, r)) for r in cur.fetchall()]
    row = next(r for r in rows if r["Name"] == str(folder))
    assert row["Source"] == f"folder {folder.resolve()}" and row["Dimensions"] == 16
    assert row["Pooling"] == "cls, L2-normalized, first 16 numbers" and row["Used_by"] == "t.v"
    assert row["Prefixes"] == "query: 'query: ', document: 'passage: '"
    assert row["Window"] == 30 - len(embed.get_model(str(folder))._tokenizer.encode("passage: ",
                                                                                        add_special_tokens=False).ids)
    assert row["Fingerprint"] == con.db.tables["t"].vectors["v"].model_fingerprint
