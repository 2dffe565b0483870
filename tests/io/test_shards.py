"""LOAD DATA of embedded shards, made here in-process with the same functions the Ray workers use
(the Ray pipeline itself: tests/distributed): stored as they are when they match the column, refused
when they do not, bad vectors and spans named by file and row."""
from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import tesseradb
from tesseradb import embed
from tesseradb.embed import rows
from tesseradb.embed.planning import plan_document
from tesseradb.io import distributed, shards

DOCS = [{"id": 1, "body": "Replication copies every table to the joining node. " * 12},
        {"id": 2, "body": "Rotate the certificates every year."}]
COLUMN = ("chunks float_vector_array knn_type='hnsw' hnsw_similarity='cosine' model_name='all-MiniLM-L6-v2' "
          "from='body' chunk_strategy='recursive' max_tokens=32 overlap_tokens=4")


def make_shard(path, settings, docs=DOCS):
    model = embed.get_model(settings.model_name)
    texts = [d["body"] for d in docs]
    plans = [plan_document(model, t, strategy=settings.chunk_strategy, max_tokens=settings.max_tokens,
                           overlap_tokens=settings.overlap_tokens, max_chunks=settings.max_chunks) for t in texts]
    table = shards.attach(pa.Table.from_pylist(docs), settings, rows.embed_plans(model, settings.chunk_strategy,
                                                                                  texts, plans))
    pq.write_table(table, path)
    return table


def settings(**changes):
    base = dict(chunk_strategy="recursive", max_tokens=32, overlap_tokens=4)
    return distributed.settings_for("chunks", "all-MiniLM-L6-v2", ["body"], **{**base, **changes})


@pytest.fixture
def table(cur):
    cur.execute(f"CREATE TABLE docs (body text, {COLUMN})")
    return cur


def test_a_matching_shard_is_stored_as_it_is(table, tmp_path):
    shard = make_shard(tmp_path / "s.parquet", settings())
    table.execute(f"LOAD DATA INFILE '{tmp_path}/s.parquet' INTO TABLE docs")
    got = dict(table.execute("SELECT id, chunks FROM docs"))
    assert {i: len(v) for i, v in got.items()} == {1: len(shard.column("chunks")[0]), 2: 1}
    assert pytest.approx(got[1][0], abs=1e-6) == shard.column("chunks")[0].as_py()[0]
    table.execute("INSERT INTO docs (id, body) VALUES (3, ?)", (DOCS[0]["body"],))
    notes = [w[2] for w in table.execute("SHOW WARNINGS")]
    assert any("reused stored vectors" in n for n in notes)  # the shard's chunk keys were recorded


def test_other_settings_are_refused_naming_both(table, tmp_path):
    make_shard(tmp_path / "s.parquet", settings(max_tokens=48))
    with pytest.raises(tesseradb.DataError) as info:
        table.execute(f"LOAD DATA INFILE '{tmp_path}/s.parquet' INTO TABLE docs")
    msg = str(info.value)
    assert "max_tokens=48" in msg and "max_tokens=32" in msg and "(max_tokens differs)" in msg
    assert table.execute("SELECT COUNT(*) FROM docs").fetchone() == (0,)


def test_spans_outside_the_text_and_bad_vectors_are_refused(table, tmp_path):
    shard = make_shard(tmp_path / "s.parquet", settings())
    spans = shard.column(shards.SPANS).to_pylist()
    spans[1] = [{"start": 0, "end": 999}]
    bad = shard.set_column(shard.schema.get_field_index(shards.SPANS), shards.SPANS, pa.array(spans, shards.SPAN_TYPE))
    pq.write_table(bad, tmp_path / "bad.parquet")
    with pytest.raises(tesseradb.DataError, match=r"bad\.parquet' row 2, column 'chunks': chunk span \(0, 999\)"):
        table.execute(f"LOAD DATA INFILE '{tmp_path}/bad.parquet' INTO TABLE docs")
    meta = json.loads(shard.schema.metadata[shards.METADATA_KEY])
    meta["format"] = 99
    pq.write_table(shard.replace_schema_metadata({shards.METADATA_KEY: json.dumps(meta)}), tmp_path / "v.parquet")
    with pytest.raises(tesseradb.DataError, match="unreadable tesseradb shard metadata"):
        table.execute(f"LOAD DATA INFILE '{tmp_path}/v.parquet' INTO TABLE docs")
    assert table.execute("SELECT COUNT(*) FROM docs").fetchone() == (0,)


def test_a_local_glob_is_the_files_it_matches_in_name_order(tmp_path):
    from tesseradb.io.distributed import expand_local_glob
    for name in ("b.parquet", "a.parquet", "notes.txt"):
        (tmp_path / name).write_text("x")
    assert expand_local_glob(str(tmp_path / "*.parquet")) == [str(tmp_path / "a.parquet"), str(tmp_path / "b.parquet")]
    assert expand_local_glob(str(tmp_path / "a.parquet")) == str(tmp_path / "a.parquet")     # not a pattern
    assert expand_local_glob("s3://bucket/docs/*.parquet") == "s3://bucket/docs/*.parquet"   # pyarrow's business
    with pytest.raises(tesseradb.OperationalError, match="no file matches"):
        expand_local_glob(str(tmp_path / "*.jsonl"))
