"""Manticore's HTTP JSON API of `tessera serve --http` obeys the operator's allow-list for remote models
too, and never sends a key back (docs/models.md#over-a-server)."""
from __future__ import annotations

import httpx
import pytest

import tesseradb
from tesseradb import embed
from tests.embed.remote.standin import KEY, StandIn


@pytest.fixture
def standin():
    model = embed.get_model("all-MiniLM-L6-v2")
    with StandIn(lambda texts: model.embed(texts), api_key=KEY) as s:
        yield s


def _sql(handle, statement: str) -> httpx.Response:
    return httpx.post(f"http://127.0.0.1:{handle.http_port}/sql?mode=raw", content=statement.encode(),
                      headers={"Content-Type": "text/plain"}, timeout=120)


def _ddl(standin) -> str:
    return (f"CREATE TABLE p (title TEXT, v FLOAT_VECTOR KNN_TYPE='hnsw' MODEL_NAME='openai/m' FROM='title' "
            f"API_KEY='{KEY}' API_URL='{standin.base}/v1/embeddings')")


def test_the_http_api_refuses_a_remote_model_the_operator_did_not_allow(tmp_path, standin):
    handle = tesseradb.serve(str(tmp_path / "docs.db"), port=0, http_port=0, background=True)
    try:
        answer = _sql(handle, _ddl(standin))
        assert "running without --allow-remote for this endpoint" in answer.json()["error"]
        assert KEY not in answer.text and standin.requests == []
    finally:
        handle.stop()


def test_the_http_api_uses_an_allowed_endpoint_and_never_shows_the_key(tmp_path, standin):
    handle = tesseradb.serve(str(tmp_path / "docs.db"), port=0, http_port=0, background=True,
                             allow_remote=(standin.base,))
    try:
        assert _sql(handle, _ddl(standin)).status_code == 200
        assert _sql(handle, "INSERT INTO p (id, title) VALUES (1, 'rotate the certificate')").status_code == 200
        found = _sql(handle, "SELECT id FROM p WHERE knn(v, 1, 'renew TLS')")
        assert found.status_code == 200 and "1" in found.text
        shown = _sql(handle, "SHOW CREATE TABLE p").text + _sql(handle, "DESCRIBE p").text
        assert KEY not in shown and "<redacted>" in shown
        broken = _sql(handle, f"CREATE TABLE q (t TEXT, v FLOAT_VECTOR KNN_TYPE='hnsw' MODEL_NAME='openai/m' "
                              f"FROM='t' API_KEY '{KEY}')")
        assert KEY not in broken.text
    finally:
        handle.stop()
