"""Connection.tables() and Connection.describe(): the public catalog (docs/dbapi.md#the-catalog)."""
from __future__ import annotations

import dataclasses

import pytest

import tesseradb

CREATE = """CREATE TABLE notes (sku varchar(20) PRIMARY KEY, title text, body text, tag string,
    code string UNIQUE, note text stored, meta json, n int NOT NULL DEFAULT 3 COMMENT 'count',
    chunks float_vector_array knn_type='hnsw' hnsw_similarity='cosine' model_name='Xenova/all-MiniLM-L6-v2'
        from='title, body' chunk_strategy='markdown' max_tokens='64' max_chunks='5',
    v float_vector knn_type='hnsw' knn_dims='4' hnsw_similarity='l2' hnsw_m='8' quantization='8bit',
    raw float_vector) morphology='stem_en'"""


@pytest.fixture
def con(tmp_path):
    con = tesseradb.connect(str(tmp_path / "c.db"))
    con.execute(CREATE)
    yield con
    con.close()


def test_every_column_with_its_declared_type_and_keys(con):
    t = con.describe("NOTES")
    assert t.name == "notes" and t.options == {"morphology": "stem_en"}
    assert [c.name for c in t.columns] == ["id", "sku", "title", "body", "tag", "code", "note", "meta", "n",
                                           "chunks", "v", "raw"]
    assert [c.position for c in t.columns] == list(range(1, 13))
    sku, code, n = t.column("sku"), t.column("Code"), t.column("n")
    assert (sku.type, sku.declared_type, sku.primary_key, sku.unique, sku.nullable) == \
        ("string", "varchar(20)", True, True, False)
    assert t.primary_key == ("sku",) and not t.column("id").primary_key
    assert (code.unique, code.primary_key) == (True, False)
    assert {k.columns for k in t.unique_keys} == {("code",), ("sku",)}
    assert (n.nullable, n.default, n.comment, n.unique) == (False, "3", "count", False)
    assert t.columns_dict["meta"] == "json" and t.column("nope") is None


def test_vector_columns_carry_their_index_model_and_chunking(con):
    t = con.describe("notes")
    chunks, v, raw = (t.column(n).vector for n in ("chunks", "v", "raw"))
    assert [c.name for c in t.vector_columns] == ["chunks", "v", "raw"]
    assert (chunks.is_array, chunks.knn_type, chunks.similarity, chunks.dims) == (True, "hnsw", "cosine", 384)
    assert (chunks.model, chunks.model_name, chunks.from_columns) == \
        ("Xenova/all-MiniLM-L6-v2", "all-MiniLM-L6-v2", ("title", "body"))
    assert chunks.chunking == tesseradb.Chunking("markdown", 64, 0, 5, "heading") and chunks.model_backed
    assert (v.dims, v.similarity, v.hnsw_m, v.quantization, v.model, v.chunking) == (4, "l2", 8, "8bit", None, None)
    assert not v.model_backed and not v.is_array
    assert raw.knn_type is None and raw.dims is None and t.column("raw").is_vector


def test_full_text_columns_carry_their_flags(con):
    t = con.describe("notes")
    assert [c.name for c in t.full_text_columns] == ["title", "body"]
    assert t.column("title").full_text == tesseradb.FullText(indexed=True, stored=True, attribute=False)
    assert t.column("note").full_text == tesseradb.FullText(indexed=False, stored=True, attribute=False)
    assert t.column("tag").full_text is None and t.column("chunks").full_text is None


def test_the_entries_are_frozen_and_the_schema_is_show_create_table(con):
    t = con.describe("notes")
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.name = "other"
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.columns[0].type = "text"
    assert t.schema == con.execute("SHOW CREATE TABLE notes").fetchone()[1]


def test_tables_lists_every_table_and_follows_ddl_of_other_connections(con, tmp_path):
    assert [t.name for t in con.tables()] == ["notes"]
    other = tesseradb.connect(str(tmp_path / "c.db"))
    other.execute("CREATE TABLE a_first (title text)")
    other.execute("ALTER TABLE notes ADD COLUMN extra int")
    other.close()
    assert [t.name for t in con.tables()] == ["a_first", "notes"]
    assert con.describe("notes").column("extra").type == "int"
    assert con.describe("a_first").primary_key == ("id",) and con.describe("a_first").column("id").auto_increment


def test_a_missing_table_is_error_1146_and_changes_nothing(con):
    with pytest.raises(tesseradb.ProgrammingError) as caught:
        con.describe("missing")
    assert caught.value.errno == 1146 and "missing" in str(caught.value)
    assert not con.in_transaction
