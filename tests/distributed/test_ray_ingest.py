"""Distributed ingest on a real local Ray cluster (2 CPUs): shards hold the engine's own chunks and
vectors, LOAD DATA stores them without running the model, a dead worker's batch is run again, and a
shard made with other settings is refused."""
from __future__ import annotations

import glob
import json
import os
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.csv
import pyarrow.parquet as pq
import pytest
import ray

import tesseradb
from tesseradb import embed
from tesseradb.embed import rows
from tesseradb.embed.model import Model
from tesseradb.io import distributed, shards

TOPICS = ["Replication copies every table from the donor node to the joining node.",
          "Certificates are rotated by replacing the key pair and reloading the listener.",
          "The fuzzy search option tolerates typos in the query words.",
          "Percolate queries store queries and match documents against them.",
          "Columnar storage keeps attributes on disk and reads only the needed blocks."]
DOCS = [{"id": i, "title": f"Page {i}", "body": " ".join(TOPICS[(i + k) % 5] for k in range(i % 7 * 6 + 1))}
        for i in range(1, 25)]
COLUMN = ("chunks float_vector_array knn_type='hnsw' hnsw_similarity='cosine' model_name='all-MiniLM-L6-v2' "
          "from='title,body' chunk_strategy='recursive' max_tokens=48 overlap_tokens=8")


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    path = tmp_path_factory.mktemp("docs") / "docs.parquet"
    pq.write_table(pa.Table.from_pylist(DOCS), path, row_group_size=7)
    return str(path)


def create(cur, name="docs", column=COLUMN):
    cur.execute(f"CREATE TABLE {name} (title string, body text, {column})")


def settings(**changes):
    base = dict(chunk_strategy="recursive", max_tokens=48, overlap_tokens=8)
    return distributed.settings_for("chunks", "all-MiniLM-L6-v2", ["title", "body"], **{**base, **changes})


@pytest.fixture(scope="module")
def shard_dir(cluster, source, tmp_path_factory):
    out = str(tmp_path_factory.mktemp("shards") / "out")
    summary = distributed.embed_to_parquet(source, out, settings(), workers=2, cpus_per_worker=0.5, batch_rows=5)
    assert summary.documents == len(DOCS) and summary.workers == 2
    return out


def stored(cur, table):
    return {i: np.asarray(v, np.float32) for i, v in cur.execute(f"SELECT id, chunks FROM {table} ORDER BY id")}


def test_shards_hold_the_engines_chunks_and_vectors(shard_dir, tmp_path, monkeypatch):
    con = tesseradb.connect(str(tmp_path / "db.db"))
    cur = con.cursor()
    create(cur, "local")
    cur.executemany("INSERT INTO local (id, title, body) VALUES (?, ?, ?)",
                    [(d["id"], d["title"], d["body"]) for d in DOCS])
    create(cur, "docs")

    def no_model(*args, **kwargs):
        raise AssertionError("LOAD DATA of a shard ran the model")
    monkeypatch.setattr(Model, "embed", no_model)
    cur.execute(f"LOAD DATA INFILE '{shard_dir}/*.parquet' INTO TABLE docs")
    con.commit()
    monkeypatch.undo()
    assert cur.execute("SELECT id, title, body FROM docs ORDER BY id").fetchall() == \
        [(d["id"], d["title"], d["body"]) for d in DOCS]
    local, loaded = stored(cur, "local"), stored(cur, "docs")
    assert set(local) == set(loaded) and any(len(v) > 3 for v in loaded.values())
    for doc_id in local:
        assert loaded[doc_id].shape == local[doc_id].shape
        assert np.abs(loaded[doc_id] - local[doc_id]).max() <= 1e-6
    hit = cur.execute("SELECT id FROM docs WHERE knn(chunks, 3, 'typos in query words')").fetchall()
    assert hit == cur.execute("SELECT id FROM local WHERE knn(chunks, 3, 'typos in query words')").fetchall()


def test_shard_spans_and_metadata(shard_dir):
    table = pa.concat_tables(pq.read_table(f) for f in sorted(glob.glob(f"{shard_dir}/*.parquet")))
    meta = json.loads(pq.read_schema(glob.glob(f"{shard_dir}/*.parquet")[0]).metadata[shards.METADATA_KEY])
    assert meta["model_fingerprint"] == embed.resolve("all-MiniLM-L6-v2").fingerprint
    assert (meta["chunk_strategy"], meta["max_tokens"], meta["overlap_tokens"], meta["from_columns"]) == \
        ("recursive", 48, 8, ["title", "body"])
    model = embed.get_model("all-MiniLM-L6-v2")
    s = settings()
    for row in table.to_pylist():
        text = f"{row['title']} {row['body']}"
        plan = rows.plan_text(model, s, text)
        assert [(x["start"], x["end"]) for x in row[shards.SPANS]] == [(c.start, c.end) for c in plan.chunks]
        assert len(row["chunks"]) == len(plan.chunks)


def test_a_shard_of_another_model_or_other_chunks_is_refused(cluster, source, shard_dir, tmp_path):
    other = str(tmp_path / "int8")
    distributed.embed_to_parquet(source, other, distributed.settings_for(
        "chunks", "all-MiniLM-L6-v2-int8", ["title", "body"], chunk_strategy="recursive", max_tokens=48,
        overlap_tokens=8), workers=1, cpus_per_worker=1, batch_rows=12)
    cur = tesseradb.connect(":memory:").cursor()
    create(cur, "docs")
    with pytest.raises(tesseradb.DataError) as info:
        cur.execute(f"LOAD DATA INFILE '{other}/*.parquet' INTO TABLE docs")
    assert "model_name='all-MiniLM-L6-v2-int8'" in str(info.value) and "model_fingerprint" in str(info.value)
    create(cur, "wider", COLUMN.replace("max_tokens=48", "max_tokens=64"))
    with pytest.raises(tesseradb.DataError, match="max_tokens differ"):
        cur.execute(f"LOAD DATA INFILE '{shard_dir}/*.parquet' INTO TABLE wider")
    create(cur, "novec", "chunks float_vector knn_type='hnsw' knn_dims='384' hnsw_similarity='cosine'")
    with pytest.raises(tesseradb.ProgrammingError, match="does not have"):
        cur.execute(f"LOAD DATA INFILE '{shard_dir}/*.parquet' INTO TABLE novec")
    with pytest.raises(tesseradb.ProgrammingError, match="leaves out 'title', a column the shard's vectors"):
        cur.execute(f"LOAD DATA INFILE '{shard_dir}/*.parquet' INTO TABLE docs (id, body)")
    for t in ("docs", "wider", "novec"):
        assert cur.execute(f"SELECT COUNT(*) FROM {t}").fetchone() == (0,)


class DiesOnce(distributed.ChunkEmbedder):
    """A worker whose process dies on the first batch any worker sees (a marker file, taken once)."""

    marker = ""  # set by the test; the class travels to the workers by value (cloudpickle)

    def __call__(self, batch):
        marker = self.marker
        try:
            os.unlink(marker)
        except OSError:
            return super().__call__(batch)
        os._exit(1)


def test_a_dead_worker_is_restarted_and_its_batch_run_again(cluster, source, shard_dir, tmp_path, monkeypatch):
    from ray import cloudpickle  # Ray's own copy: the one that ships the class to the workers
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    marker = tmp_path / "die-once"
    marker.write_text("x")
    monkeypatch.setattr(DiesOnce, "marker", str(marker))
    out = str(tmp_path / "retried")
    summary = distributed.embed_to_parquet(source, out, settings(), workers=1, cpus_per_worker=1,
                                           batch_rows=8, embedder=DiesOnce)
    assert not marker.exists()  # a worker did die
    assert summary.documents == len(DOCS)
    got = pa.concat_tables(pq.read_table(f) for f in glob.glob(f"{out}/*.parquet")).sort_by("id")
    want = pa.concat_tables(pq.read_table(f) for f in glob.glob(f"{shard_dir}/*.parquet")).sort_by("id")
    assert got.column("id").to_pylist() == [d["id"] for d in DOCS]
    assert got.column(shards.SPANS).to_pylist() == want.column(shards.SPANS).to_pylist()
    for a, b in zip(got.column("chunks").to_pylist(), want.column("chunks").to_pylist()):
        assert np.abs(np.asarray(a) - np.asarray(b)).max() <= 1e-6


def test_jsonl_and_csv_inputs_with_an_id_column_and_max_chunks(cluster, tmp_path):
    (tmp_path / "in.jsonl").write_text("".join(json.dumps({"doc": d["id"], "title": d["title"], "body": d["body"]})
                                               + "\n" for d in DOCS[:6]))
    pyarrow.csv.write_csv(pa.Table.from_pylist([{"doc": d["id"], "title": d["title"], "body": d["body"]}
                                           for d in DOCS[6:12]]), tmp_path / "in.csv")
    s = settings(max_chunks=2)
    for name in ("in.jsonl", "in.csv"):
        summary = distributed.embed_to_parquet(str(tmp_path / name), str(tmp_path / f"out-{name}"), s,
                                               id_column="doc", workers=1, cpus_per_worker=1, batch_rows=4)
        assert summary.documents == 6 and summary.chunks <= 12
    cur = tesseradb.connect(":memory:").cursor()
    create(cur, "docs", COLUMN + " max_chunks=2")
    cur.execute(f"LOAD DATA INFILE '{tmp_path}/out-in.*/*.parquet' INTO TABLE docs")
    assert [r[0] for r in cur.execute("SELECT id FROM docs ORDER BY id")] == [d["id"] for d in DOCS[:12]]
    assert max(r[0] for r in cur.execute("SELECT LENGTH(chunks) FROM docs")) == 2


def test_a_missing_column_or_no_free_cpu_is_refused_before_any_worker_starts(cluster, source, tmp_path):
    other = distributed.settings_for("chunks", "all-MiniLM-L6-v2", ["title", "summary"])
    with pytest.raises(tesseradb.ProgrammingError, match="the input has no column 'summary'"):
        distributed.embed_to_parquet(source, str(tmp_path / "x"), other, workers=1)
    with pytest.raises(tesseradb.ProgrammingError, match="no id column 'doc'"):
        distributed.embed_to_parquet(source, str(tmp_path / "x"), settings(), id_column="doc", workers=1)
    with pytest.raises(tesseradb.ProgrammingError, match="leave less than one of the cluster's 2 CPUs free"):
        distributed.embed_to_parquet(source, str(tmp_path / "x"), settings(), workers=2, cpus_per_worker=1)
    assert not (tmp_path / "x").exists()


def test_settings_come_from_the_database_or_follow_the_ddl_rules(tmp_path):
    path = str(tmp_path / "s.db")
    con = tesseradb.connect(path)
    create(con.cursor(), "docs")
    con.commit()
    con.close()
    assert distributed.settings_of(path, "DOCS", "Chunks") == settings()
    with pytest.raises(tesseradb.ProgrammingError, match="overlap_tokens requires an explicit non-zero max_tokens"):
        distributed.settings_for("v", "all-MiniLM-L6-v2", ["body"], chunk_strategy="recursive", overlap_tokens=8)
    with pytest.raises(tesseradb.ProgrammingError, match="unknown model 'no-such-model'"):
        distributed.settings_for("v", "no-such-model", ["body"])
    with pytest.raises(tesseradb.ProgrammingError, match="does not exist"):
        distributed.settings_of(path, "nope", "chunks")


def test_tessera_embed_command(cluster, source, tmp_path):
    path = str(tmp_path / "cli.db")
    con = tesseradb.connect(path)
    create(con.cursor(), "docs")
    con.commit()
    con.close()
    out = str(tmp_path / "cli-shards")
    run = subprocess.run([sys.executable, "-m", "tesseradb.clients.shell.main", "embed", source, out,
                          "--database", path, "--table", "docs", "--column", "chunks",
                          "--address", ray.get_runtime_context().gcs_address, "--workers", "1"],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert f"{len(DOCS)} documents" in run.stdout and "LOAD DATA INFILE" in run.stdout
    con = tesseradb.connect(path)
    cur = con.cursor()
    cur.execute(f"LOAD DATA INFILE '{out}/*.parquet' INTO TABLE docs")
    assert cur.execute("SELECT COUNT(*) FROM docs").fetchone() == (len(DOCS),)
    bad = subprocess.run([sys.executable, "-m", "tesseradb.clients.shell.main", "embed", source, out,
                          "--model-name", "no-such-model", "--from", "body"], capture_output=True, text=True)
    assert bad.returncode == 1 and "unknown model 'no-such-model'" in bad.stderr


def test_without_ray_the_module_imports_and_names_the_extra():
    code = ("import sys; sys.modules['ray'] = None\n"
            "import tesseradb\nfrom tesseradb.io import distributed\n"
            "try:\n    tesseradb.embed_to_parquet('a.parquet', 'out', model_name='all-MiniLM-L6-v2', from_columns=['b'])\n"
            "except tesseradb.NotSupportedError as exc:\n    print(exc)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "pip install 'tesseradb[ray]'" in out
