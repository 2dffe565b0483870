"""tessera mcp's connections follow the operator's allow-list for remote models (--allow-remote,
--allow-env): a table whose model is an endpoint is searchable only where the operator allowed it."""
from __future__ import annotations

import pytest

import tesseradb
from tesseradb import embed
from tesseradb.clients.mcp.session import Session
from tests.embed.remote.standin import KEY, StandIn


@pytest.fixture
def remote_db(tmp_path, monkeypatch):
    monkeypatch.setenv("TESSERA_MCP_KEY", KEY)
    model = embed.get_model("all-MiniLM-L6-v2")
    with StandIn(lambda texts: model.embed(texts), api_key=KEY) as server:
        path = str(tmp_path / "docs.db")
        con = tesseradb.connect(path)
        con.execute(f"CREATE TABLE docs (body TEXT, v FLOAT_VECTOR KNN_TYPE='hnsw' MODEL_NAME='openai/m' "
                    f"FROM='body' API_KEY='env:TESSERA_MCP_KEY' API_URL='{server.base}/v1/embeddings')")
        con.close()
        server.requests.clear()                          # the width probe of CREATE TABLE
        yield path, server


def test_without_allow_remote_the_model_is_refused(remote_db, monkeypatch):
    path, server = remote_db
    session = Session(path, allow_writes=True)
    session.open()
    try:
        with pytest.raises(tesseradb.OperationalError) as info:
            session.reader.execute("SELECT id FROM docs WHERE knn(v, 1, 'hello')")
        assert info.value.errno == 1290
        with pytest.raises(tesseradb.OperationalError):
            session.writer.execute("INSERT INTO docs (id, body) VALUES (1, 'hello')")
        assert server.requests == []
    finally:
        session.close()


def test_allowed_endpoint_and_env_name_work(remote_db, monkeypatch):
    path, server = remote_db
    session = Session(path, allow_writes=True, allow_remote=(server.base + "/v1",), allow_env=("TESSERA_MCP_KEY",))
    session.open()
    try:
        session.writer.execute("INSERT INTO docs (id, body) VALUES (1, 'rotate the certificate')")
        assert session.reader.execute("SELECT id FROM docs WHERE knn(v, 1, 'renew TLS')").fetchall() == [(1,)]
    finally:
        session.close()
    session = Session(path, allow_remote=(server.base + "/v1",))          # the env name not listed
    session.open()
    try:
        with pytest.raises(tesseradb.OperationalError, match="--allow-env"):
            session.reader.execute("SELECT id FROM docs WHERE knn(v, 1, 'renew TLS')")
    finally:
        session.close()
