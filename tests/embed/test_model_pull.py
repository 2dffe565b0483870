"""``tessera model pull NAME[@REVISION]`` / ``tesseradb.pull_model`` against a loopback stand-in of the
Hugging Face Hub (tests/embed/hub_standin.py), proven faithful by driving it with ``huggingface_hub``'s own
download calls; then the pulled model works offline and nothing is ever fetched at INSERT or query time."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import st_models  # tests/embed/st_models.py
import tesseradb
from hub_standin import HubStandIn  # tests/embed/hub_standin.py
from tesseradb.embed import registry

pytestmark = pytest.mark.slow        # a loopback server (and, once, a process)

REPO = "tiny-org/tiny-bert"
PULLED = {"config.json", "config_sentence_transformers.json", "modules.json", "1_Pooling/config.json",
          "onnx/model.onnx", "tokenizer.json"}


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(autouse=True)
def _fresh(monkeypatch, tmp_path):
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("TESSERA_CACHE_DIR", str(tmp_path / "tessera-cache"))
    monkeypatch.setattr(registry, "_infos", {})


@pytest.fixture()
def hub(tmp_path):
    """The stand-in, serving two commits of one model: ``main`` (CLS pooling, e5's prompts) and an older
    one tagged ``v1`` (other weights, mean pooling)."""
    old = st_models.build(tmp_path / "src-v1", pooling="mean", seed=5)
    new = st_models.build(tmp_path / "src-main", pooling="cls", seed=3,
                          prompts={"query": "query: ", "document": "passage: "})
    with HubStandIn() as server:
        server.sources = {"v1": old, "main": new}
        server.commits = {"v1": server.add(REPO, old, tags=("v1",)), "main": server.add(REPO, new)}
        yield server


def test_the_stand_in_answers_huggingface_hubs_own_client(hub, tmp_path):
    from huggingface_hub import HfApi, hf_hub_download, snapshot_download
    api = HfApi(endpoint=hub.base)
    info = api.model_info(REPO)
    assert info.sha == hub.commits["main"] and "onnx/model.onnx" in {s.rfilename for s in info.siblings}
    assert api.model_info(REPO, revision="v1").sha == hub.commits["v1"]
    tree = {f.path: f for f in api.list_repo_tree(REPO, recursive=True) if hasattr(f, "blob_id")}
    assert tree["onnx/model.onnx"].lfs.sha256 == _sha256(hub.sources["main"] / "onnx" / "model.onnx")
    assert tree["tokenizer.json"].lfs is None and tree["tokenizer.json"].size == (
        hub.sources["main"] / "tokenizer.json").stat().st_size
    cache = tmp_path / "client-cache"
    # one small file and one LFS file (302 to the CDN) with hf_hub_download
    for name in ("tokenizer.json", "onnx/model.onnx"):
        got = Path(hf_hub_download(REPO, name, cache_dir=cache, endpoint=hub.base))
        assert got.read_bytes() == (hub.sources["main"] / name).read_bytes()
        assert got.parent.parent.name == hub.commits["main"] or got.parent.name == hub.commits["main"]
    assert any(path.startswith("/blobs/") for _, path in hub.requests)      # the LFS file came from the CDN
    # a whole tagged revision with snapshot_download, then huggingface_hub's own checksum verification
    folder = Path(snapshot_download(REPO, revision="v1", cache_dir=cache, endpoint=hub.base))
    assert folder.name == hub.commits["v1"]
    assert (folder / "onnx" / "model.onnx").read_bytes() == (hub.sources["v1"] / "onnx" / "model.onnx").read_bytes()
    assert (cache / f"models--{REPO.replace('/', '--')}" / "refs" / "v1").read_text() == hub.commits["v1"]
    check = api.verify_repo_checksums(REPO, revision=hub.commits["v1"], cache_dir=cache)
    assert check.checked_count == len(list(hub.sources["v1"].rglob("*.*"))) and not check.mismatches
    # the Hub's errors, as huggingface_hub classifies them
    from huggingface_hub.errors import RemoteEntryNotFoundError, RepositoryNotFoundError, RevisionNotFoundError
    with pytest.raises(RepositoryNotFoundError):
        api.model_info("nobody/nothing")
    with pytest.raises(RevisionNotFoundError):
        api.model_info(REPO, revision="v9")
    with pytest.raises(RemoteEntryNotFoundError):
        hf_hub_download(REPO, "missing.json", cache_dir=cache, endpoint=hub.base)


def test_pull_fetches_the_model_records_its_commit_and_hashes_and_it_works_offline(hub, tmp_path):
    record = tesseradb.pull_model(REPO, endpoint=hub.base)
    src = hub.sources["main"]
    assert record.repo == REPO and record.revision == hub.commits["main"] and record.requested is None
    folder = Path(record.folder)
    assert folder.is_relative_to(tmp_path / "hf-home" / "hub") and folder.name == hub.commits["main"]
    assert set(record.files) == PULLED                         # the graph, tokenizer and json files; no extras
    assert record.files == {name: _sha256(src / name) for name in PULLED}
    kept = json.loads((tmp_path / "tessera-cache" / "pulled" / "tiny-org--tiny-bert.json").read_text())
    assert kept["revision"] == hub.commits["main"] and kept["files"] == record.files
    assert [r.repo for r in tesseradb.pulled_models()] == [REPO]

    seen = len(hub.requests)
    con = tesseradb.connect()
    con.execute(f"CREATE TABLE docs (body TEXT, v FLOAT_VECTOR KNN_TYPE='hnsw' HNSW_SIMILARITY='cosine' "
                f"MODEL_NAME='{REPO}' FROM='body')")
    texts = ["the cat sat on the mat", "rotate the server certificate", "backup and restore the database"]
    for n, text in enumerate(texts, 1):
        con.execute("INSERT INTO docs (id, body) VALUES (?, ?)", (n, text))
    got = np.array(con.execute("SELECT v FROM docs WHERE id = 2").fetchall()[0][0], np.float32)
    want = st_models.reference(src, texts[1], pooling="cls", prefix="passage: ")   # the folder's document prompt
    np.testing.assert_allclose(got, want, atol=1e-5)
    # the query gets the folder's query prompt; the engine's ranking is the reference's (a random model)
    query = st_models.reference(src, "restore the database backup", pooling="cls", prefix="query: ")
    docs = [st_models.reference(src, t, pooling="cls", prefix="passage: ") for t in texts]
    order = [int(n) + 1 for n in np.argsort([-float(d @ query) for d in docs])]
    rows = con.execute("SELECT id FROM docs WHERE knn(v, 3, 'restore the database backup')").fetchall()
    assert [r[0] for r in rows] == order
    assert hub.requests[seen:] == []                           # nothing fetched at CREATE, INSERT or query


def test_a_pinned_revision_is_pulled_and_resolved(hub):
    for pin in ("v1", hub.commits["v1"]):
        record = tesseradb.pull_model(f"{REPO}@{pin}", endpoint=hub.base)
        assert record.revision == hub.commits["v1"] and record.requested == pin
        assert record.files["onnx/model.onnx"] == _sha256(hub.sources["v1"] / "onnx" / "model.onnx")
    seen = len(hub.requests)
    con = tesseradb.connect()
    con.execute(f"CREATE TABLE t (body TEXT, v FLOAT_VECTOR KNN_TYPE='hnsw' MODEL_NAME='{REPO}@v1' FROM='body')")
    con.execute("INSERT INTO t (id, body) VALUES (1, 'the dog sat')")
    got = np.array(con.execute("SELECT v FROM t").fetchall()[0][0], np.float32)
    np.testing.assert_allclose(got, st_models.reference(hub.sources["v1"], "the dog sat", pooling="mean"), atol=1e-5)
    with pytest.raises(tesseradb.ProgrammingError) as info:    # main was never pulled: not on this machine
        con.execute(f"CREATE TABLE u (body TEXT, v FLOAT_VECTOR KNN_TYPE='hnsw' MODEL_NAME='{REPO}@main' FROM='body')")
    assert f"tessera model pull {REPO}@main" in str(info.value)
    assert hub.requests[seen:] == []


def test_a_corrupt_download_is_refused_and_nothing_recorded(hub, tmp_path):
    hub.corrupt.add("onnx/model.onnx")                         # the CDN flips a byte; the size stays right
    with pytest.raises(tesseradb.Error) as info:
        tesseradb.pull_model(REPO, endpoint=hub.base)
    text = str(info.value)
    assert "refused" in text and "onnx/model.onnx" in text and "sha256" in text
    assert _sha256(hub.sources["main"] / "onnx" / "model.onnx") in text
    assert tesseradb.pulled_models() == []
    with pytest.raises(tesseradb.ProgrammingError):            # the corrupt graph is not used either
        tesseradb.connect().execute(f"CREATE TABLE t (body TEXT, v FLOAT_VECTOR KNN_TYPE='hnsw' "
                                    f"MODEL_NAME='{REPO}' FROM='body')")
    hub.corrupt.clear()                                        # the next pull fetches the file again
    record = tesseradb.pull_model(REPO, endpoint=hub.base)
    assert record.files["onnx/model.onnx"] == _sha256(hub.sources["main"] / "onnx" / "model.onnx")


def test_unknown_model_or_revision_is_a_clear_error(hub):
    with pytest.raises(tesseradb.Error, match="does not exist on the Hugging Face hub"):
        tesseradb.pull_model("nobody/nothing", endpoint=hub.base)
    with pytest.raises(tesseradb.Error, match="has no revision 'v9'"):
        tesseradb.pull_model(f"{REPO}@v9", endpoint=hub.base)


def test_the_cli_pulls_through_hf_endpoint(hub, tmp_path):
    env = dict(os.environ, HF_ENDPOINT=hub.base, HF_HOME=str(tmp_path / "hf-home"),
               TESSERA_CACHE_DIR=str(tmp_path / "tessera-cache"))
    env.pop("HF_HUB_OFFLINE", None)
    env.pop("HF_HUB_CACHE", None)
    run = subprocess.run([sys.executable, "-m", "tesseradb.clients.shell.main", "model", "pull", f"{REPO}@v1"],
                         env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert f"pulled {REPO} at revision {hub.commits['v1']}" in run.stdout
    assert f"{_sha256(hub.sources['v1'] / 'onnx' / 'model.onnx')}  onnx/model.onnx" in run.stdout
    listed = subprocess.run([sys.executable, "-m", "tesseradb.clients.shell.main", "model", "list"],
                            env=env, capture_output=True, text=True, timeout=120)
    assert listed.stdout.startswith(f"{REPO}\t{hub.commits['v1']}\t{len(PULLED)} files")
