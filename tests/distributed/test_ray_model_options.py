"""``tessera embed`` embeds with the column's model options (document_prefix, dims, a remote endpoint's
settings) on a real local Ray cluster, so LOAD DATA of its shards matches the column's fingerprint; an
api_key travels to the workers only as an ``env:`` reference, never written into a shard."""
from __future__ import annotations

import glob
import json
import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import ray

import tesseradb
from tesseradb import embed
from tesseradb.io import distributed, shards
from tests.embed import st_models
from tests.embed.remote.standin import KEY, StandIn

WORDS = "backup restore database table vector search model token window chunk prefix cat dog sat mat".split()
DOCS = [{"id": i, "body": " ".join(WORDS[(i * k) % len(WORDS)] for k in range(1, 4 + i % 5))} for i in range(1, 13)]
ENV = "TESSERA_RAY_TEST_KEY"      # set before the cluster starts, so its workers inherit it


@pytest.fixture(scope="module")
def cluster():
    os.environ[ENV] = KEY
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()
    os.environ.pop(ENV, None)


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    path = tmp_path_factory.mktemp("docs") / "docs.parquet"
    pq.write_table(pa.Table.from_pylist(DOCS), path)
    return str(path)


def _shard_rows(out):
    return pa.concat_tables(pq.read_table(f) for f in sorted(glob.glob(f"{out}/*.parquet"))).sort_by("id")


def _metadata(out):
    return json.loads(pq.read_schema(glob.glob(f"{out}/*.parquet")[0]).metadata[shards.METADATA_KEY])


def test_workers_embed_with_the_columns_prefix_and_dims(cluster, source, tmp_path):
    folder = st_models.build(tmp_path / "tiny", pooling="mean", prompts={"document": "passage: "})
    column = (f"v FLOAT_VECTOR KNN_TYPE='hnsw' HNSW_SIMILARITY='cosine' MODEL_NAME='{folder}' FROM='body' "
              f"DOCUMENT_PREFIX='represent this: ' DIMS='16'")
    path = str(tmp_path / "db.db")
    con = tesseradb.connect(path)
    con.execute(f"CREATE TABLE docs (body TEXT, {column})")
    con.execute(f"CREATE TABLE local (body TEXT, {column})")
    con.executemany("INSERT INTO local (id, body) VALUES (?, ?)", [(d["id"], d["body"]) for d in DOCS])
    con.commit()
    settings = distributed.settings_of(path, "docs", "v")
    assert dict(settings.model_options) == {"document_prefix": "represent this: ", "dims": "16"}
    bare = embed.resolve(str(folder)).fingerprint
    assert settings.model_fingerprint != bare and settings.dims == 16

    out = str(tmp_path / "shards")
    summary = distributed.embed_to_parquet(source, out, settings, workers=1, cpus_per_worker=1, batch_rows=5)
    assert summary.documents == len(DOCS)
    meta = _metadata(out)
    assert meta["model_fingerprint"] == settings.model_fingerprint
    assert meta["model_options"] == [["document_prefix", "represent this: "], ["dims", "16"]]
    for row in _shard_rows(out).to_pylist():           # the column's prefix (not the folder's) and truncation
        want = st_models.reference(folder, row["body"], pooling="mean", prefix="represent this: ", dims=16)
        np.testing.assert_allclose(np.asarray(row["v"][0], np.float32), want, atol=1e-5)

    con.execute(f"LOAD DATA INFILE '{out}/*.parquet' INTO TABLE docs")
    loaded = dict(con.execute("SELECT id, v FROM docs").fetchall())
    local = dict(con.execute("SELECT id, v FROM local").fetchall())
    assert sorted(loaded) == [d["id"] for d in DOCS]
    for i, v in local.items():
        np.testing.assert_allclose(np.asarray(loaded[i], np.float32), np.asarray(v, np.float32), atol=1e-5)
    assert con.execute("SELECT id FROM docs WHERE knn(v, 1, ?)", (DOCS[3]["body"],)).fetchall()[0][0] \
        == con.execute("SELECT id FROM local WHERE knn(v, 1, ?)", (DOCS[3]["body"],)).fetchall()[0][0]

    # the same column without its options is another model: its shards are refused by the column
    other = str(tmp_path / "bare")
    distributed.embed_to_parquet(source, other, distributed.settings_for("v", str(folder), ["body"]),
                                 workers=1, cpus_per_worker=1, batch_rows=12)
    con.execute(f"CREATE TABLE again (body TEXT, {column})")
    with pytest.raises(tesseradb.DataError, match="model_fingerprint"):
        con.execute(f"LOAD DATA INFILE '{other}/*.parquet' INTO TABLE again")


@pytest.fixture()
def endpoint():
    model = embed.get_model("all-MiniLM-L6-v2")
    with StandIn(lambda texts: model.embed(texts), api_key=KEY) as server:
        yield server


def test_a_remote_columns_key_travels_only_as_an_env_reference(cluster, source, tmp_path, endpoint):
    path = str(tmp_path / "remote.db")
    con = tesseradb.connect(path)
    url = f"{endpoint.base}/v1/embeddings"
    con.execute(f"CREATE TABLE lit (body TEXT, v FLOAT_VECTOR KNN_TYPE='hnsw' MODEL_NAME='openai/m' FROM='body' "
                f"API_KEY='{KEY}' API_URL='{url}' QUERY_PREFIX='q: ' DIMS='128' BATCH_SIZE='4')")
    con.execute(f"CREATE TABLE ref (body TEXT, v FLOAT_VECTOR KNN_TYPE='hnsw' MODEL_NAME='openai/m' FROM='body' "
                f"API_KEY='env:{ENV}' API_URL='{url}' QUERY_PREFIX='q: ' DIMS='128' BATCH_SIZE='4')")
    con.commit()
    with pytest.raises(tesseradb.ProgrammingError) as info:          # a literal key is never sent to workers
        distributed.settings_of(path, "lit", "v")
    assert "--api-key-env" in str(info.value) and KEY not in str(info.value)

    for table, options in (("lit", {"api_key_env": ENV}), ("ref", {})):
        settings = distributed.settings_of(path, table, "v", **options)
        assert ("api_key", f"env:{ENV}") in settings.model_options and settings.dims == 128
        out = str(tmp_path / f"shards-{table}")
        endpoint.requests.clear()
        summary = distributed.embed_to_parquet(source, out, settings, workers=1, cpus_per_worker=1, batch_rows=6)
        assert summary.documents == len(DOCS)
        bodies = [body for p, _, body in endpoint.requests if isinstance(body.get("input"), list)]
        assert bodies and max(len(b["input"]) for b in bodies) <= 4          # the column's batch_size
        assert all({k.lower(): v for k, v in h.items()}["authorization"] == f"Bearer {KEY}" for _, h, _ in endpoint.requests)
        for f in glob.glob(f"{out}/*.parquet"):                              # the key is in no shard
            assert KEY.encode() not in open(f, "rb").read()
        con.execute(f"LOAD DATA INFILE '{out}/*.parquet' INTO TABLE {table}")
        assert con.execute(f"SELECT COUNT(*) FROM {table}").fetchone() == (len(DOCS),)
        got = np.asarray(dict(con.execute(f"SELECT id, v FROM {table}").fetchall())[1], np.float32)
        want = embed.get_model("all-MiniLM-L6-v2").embed([DOCS[0]["body"]])[0][:128]
        np.testing.assert_allclose(got, want / np.linalg.norm(want), atol=1e-5)


def test_a_worker_without_the_key_variable_refuses_the_run(cluster, source, tmp_path, endpoint, monkeypatch):
    path = str(tmp_path / "nokey.db")
    con = tesseradb.connect(path)
    monkeypatch.setenv("TESSERA_RAY_LATE_KEY", KEY)           # the driver has it; the cluster's workers do not
    con.execute(f"CREATE TABLE r (body TEXT, v FLOAT_VECTOR KNN_TYPE='hnsw' MODEL_NAME='openai/m' FROM='body' "
                f"API_KEY='env:TESSERA_RAY_LATE_KEY' API_URL='{endpoint.base}/v1/embeddings')")
    con.commit()
    settings = distributed.settings_of(path, "r", "v")
    out = tmp_path / "never"
    with pytest.raises(tesseradb.OperationalError, match="environment variable TESSERA_RAY_LATE_KEY is not set"):
        distributed.embed_to_parquet(source, str(out), settings, workers=1, cpus_per_worker=1)
    assert not out.exists()


def test_tessera_embed_takes_model_options_on_the_command_line(cluster, source, tmp_path):
    import subprocess
    import sys
    folder = st_models.build(tmp_path / "tiny", pooling="cls")
    out = str(tmp_path / "cli")
    base = [sys.executable, "-m", "tesseradb.clients.shell.main", "embed", source, out, "--model-name", str(folder),
            "--from", "body", "--column", "v", "--address", ray.get_runtime_context().gcs_address, "--workers", "1"]
    run = subprocess.run(base + ["--option", "document_prefix=represent this: ", "--option", "dims=8"],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    meta = _metadata(out)
    assert meta["model_options"] == [["document_prefix", "represent this: "], ["dims", "8"]] and meta["dims"] == 8
    row = _shard_rows(out).to_pylist()[0]
    want = st_models.reference(folder, row["body"], pooling="cls", prefix="represent this: ", dims=8)
    np.testing.assert_allclose(np.asarray(row["v"][0], np.float32), want, atol=1e-5)
    bad = subprocess.run(base + ["--option", "dims"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "--option 'dims' is not NAME=VALUE" in bad.stderr
