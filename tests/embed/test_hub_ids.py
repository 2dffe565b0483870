"""Hugging Face ids resolve offline from the caches a user's tools fill; nothing is downloaded implicitly."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import st_models  # tests/embed/st_models.py
import tesseradb
from tesseradb import embed
from tesseradb.embed import registry

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def _hf_cache(root, repo="tiny/bert"):
    """The layout `hf download` leaves: models--ORG--NAME/snapshots/COMMIT and refs/main."""
    folder = root / f"models--{repo.replace('/', '--')}"
    st_models.build(folder / "snapshots" / COMMIT, pooling="cls", prompts={"query": "query: "})
    (folder / "refs").mkdir()
    (folder / "refs" / "main").write_text(COMMIT)
    return folder / "snapshots" / COMMIT


@pytest.fixture(autouse=True)
def _fresh(monkeypatch, tmp_path):
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "empty-hf-home"))
    monkeypatch.setenv("TESSERA_CACHE_DIR", str(tmp_path / "tessera-cache"))
    monkeypatch.setattr(registry, "_infos", {})      # names resolved afresh; opened models stay shared


@pytest.mark.parametrize("variable", ["HF_HUB_CACHE", "HF_HOME"])
def test_an_id_in_the_hugging_face_cache_resolves_offline(tmp_path, monkeypatch, variable):
    hub_dir = tmp_path / "hf" / ("hub" if variable == "HF_HOME" else "")
    snapshot = _hf_cache(hub_dir)
    monkeypatch.setenv(variable, str(tmp_path / "hf") if variable == "HF_HOME" else str(hub_dir))
    con = tesseradb.connect()
    con.execute("CREATE TABLE t (body text, v float_vector knn_type='hnsw' model_name='tiny/bert' from='body')")
    con.execute("INSERT INTO t (id, body) VALUES (1, 'the cat sat on the mat')")
    got = np.array(con.execute("SELECT v FROM t").fetchall()[0][0], np.float32)
    np.testing.assert_allclose(got, st_models.reference(snapshot, "the cat sat on the mat", pooling="cls"), atol=1e-5)
    assert embed.resolve(f"tiny/bert@{COMMIT}").fingerprint == embed.resolve("tiny/bert").fingerprint
    assert "model_name='tiny/bert'" in con.execute("SHOW CREATE TABLE t").fetchall()[0][1]


def test_tesseradbs_own_model_folder_is_looked_in_next(tmp_path):
    st_models.build(tmp_path / "tessera-cache" / "models" / "hub" / "tiny" / "own")
    assert embed.resolve("tiny/own").dims == 32


def test_a_missing_model_prints_the_pull_command_and_nothing_is_fetched(tmp_path):
    con = tesseradb.connect()
    with pytest.raises(tesseradb.ProgrammingError) as info:
        con.execute("CREATE TABLE t (body text, v float_vector knn_type='hnsw' model_name='BAAI/bge-small-en-v1.5' "
                    "from='body')")
    assert "tessera model pull BAAI/bge-small-en-v1.5" in str(info.value) and info.value.errno == 1064
    assert not (tmp_path / "empty-hf-home").exists()          # nothing was written to the cache


@pytest.mark.slow
def test_model_pull_offline_is_a_clear_error(tmp_path):
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_HUB_CACHE=str(tmp_path / "hub"),
               TESSERA_CACHE_DIR=str(tmp_path / "cache"))
    run = subprocess.run([sys.executable, "-m", "tesseradb.clients.shell.main", "model", "pull", "BAAI/bge-small-en-v1.5"],
                         env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 1 and "tessera model pull: ERROR 1064" in run.stderr
    assert "cannot pull 'BAAI/bge-small-en-v1.5'" in run.stderr and "Traceback" not in run.stderr
