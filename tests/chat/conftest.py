"""A small table of our own notes with an auto-embedding column, and the chat stand-in."""
from __future__ import annotations

import pytest

import tesseradb
from tests.chat.standin import ChatStandIn

NOTES = [
    (1, "Vector search", "Vector search compares embeddings to find semantically similar documents. "
        "Each document is cut into chunks and every chunk gets a vector from the model."),
    (2, "Full-text search", "Full-text search matches terms and phrases in indexed text, ranked with BM25."),
    (3, "Backup runbook", "# Backup runbook\n\n## Nightly snapshots\n\nSnapshots of the primary run nightly at "
        "02:00 and are kept for fourteen days.\n\n## Restoring\n\nTo restore, stop the writer, copy the "
        "snapshot back and start the writer again."),
    (4, "Certificate rotation", "Replication certificates expire every ninety days. Rotate them with the "
        "rotate-certs script on each replica, then reload the replication service."),
]
TABLE = ("CREATE TABLE docs (title text, content text, embedding float_vector_array knn_type='hnsw' "
         "hnsw_similarity='cosine' model_name='Xenova/all-MiniLM-L6-v2' from='title,content' "
         "chunk_strategy='recursive' max_tokens='64' overlap_tokens='8')")


@pytest.fixture
def standin():
    with ChatStandIn() as server:
        yield server


@pytest.fixture
def notes_db(tmp_path):
    path = str(tmp_path / "notes.db")
    con = tesseradb.connect(path, autocommit=True)
    cur = con.cursor()
    cur.execute(TABLE)
    cur.executemany("INSERT INTO docs (id, title, content) VALUES (?, ?, ?)", NOTES)
    con.close()
    return path


@pytest.fixture
def chat(notes_db, standin):
    """A connection to the notes with chat model `assistant` pointed at the stand-in."""
    con = tesseradb.connect(notes_db, autocommit=True)
    con.cursor().execute(f"CREATE CHAT MODEL assistant (model='openai:gpt-4o-mini', base_url='{standin.base_url}', "
                         "timeout=5)")
    yield con
    con.close()
