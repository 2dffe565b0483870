"""Remote embedding models over the MCP protocol: ``tessera mcp`` driven by the MCP SDK's own client over
stdio (and streamable HTTP), with tables whose model is an ``openai/...`` endpoint served by the loopback
stand-in of OpenAI's API. The operator's --allow-remote / --allow-env decide; the key never comes back."""
from __future__ import annotations

import json
import os

import pytest
from mcp.client.stdio import StdioServerParameters, stdio_client

import tesseradb
from tesseradb import embed
from tests.embed.remote.standin import KEY, StandIn
from tests.mcp.support import TESSERA, HttpProcess, Live, http

ENV = "TESSERA_MCP_PROTOCOL_KEY"
TEXTS = ["Rotate the replication certificate on the standby first.", "Coffee is served at eight.",
         "Backups run every night at two and are kept for seven days."]
QUESTION = "renew the TLS certificate"


@pytest.fixture(scope="module")
def local_model():
    return embed.get_model("all-MiniLM-L6-v2")


@pytest.fixture(scope="module")
def remote(tmp_path_factory, local_model):
    """A database with two remote-model tables (the key written in one, an env: reference in the other),
    filled in-process, and the stand-in that serves their vectors."""
    with StandIn(lambda texts: local_model.embed(texts), api_key=KEY) as server:
        path = str(tmp_path_factory.mktemp("mcp-remote") / "docs.db")
        os.environ[ENV] = KEY
        con = tesseradb.connect(path, autocommit=True)
        for table, key in (("notes", KEY), ("envnotes", f"env:{ENV}")):
            con.execute(f"CREATE TABLE {table} (body TEXT, v FLOAT_VECTOR KNN_TYPE='hnsw' HNSW_SIMILARITY='cosine' "
                        f"MODEL_NAME='openai/text-embedding-3-small' FROM='body' API_KEY='{key}' "
                        f"API_URL='{server.base}/v1/embeddings')")
            con.executemany(f"INSERT INTO {table} (body) VALUES (?)", [(t,) for t in TEXTS])
        want = [r[0] for r in con.execute("SELECT id FROM notes WHERE knn(v, 3, ?)", (QUESTION,)).fetchall()]
        con.close()
        os.environ.pop(ENV, None)
        yield path, server, want


def _stdio(db: str, *args: str, env: dict | None = None) -> Live:
    """tessera mcp over stdio; the SDK passes the child only a safe default environment unless given one."""
    full = {**os.environ, **(env or {})}
    return Live(lambda: stdio_client(StdioServerParameters(command=TESSERA, args=["mcp", db, *args], env=full)))


def _no_key_in(live: Live) -> None:
    """describe, the schema resources and SHOW CREATE TABLE through sql: the key shown nowhere."""
    described = live.ok("describe")
    assert {t["name"] for t in described["tables"]} == {"notes", "envnotes"}
    shown = [json.dumps(described)]
    for table in ("notes", "envnotes"):
        shown.append(live.read_resource(f"tessera://schema/{table}").contents[0].text)
        shown.append(json.dumps(live.ok("sql", {"query": f"SHOW CREATE TABLE {table}"})))
    assert all(KEY not in text for text in shown)
    assert "api_key='<redacted>'" in shown[1] and f"api_key='env:{ENV}'" in shown[3]


def test_allowed_endpoint_searches_and_writes_and_never_shows_the_key(remote):
    path, server, want = remote
    live = _stdio(path, "--allow-writes", "--allow-remote", server.base + "/v1", "--allow-env", ENV,
                  env={ENV: KEY})
    try:
        server.requests.clear()
        found = live.ok("search", {"table": "notes", "query": QUESTION, "mode": "semantic", "limit": 3})
        assert [r["id"] for r in found["results"]] == want
        assert any(QUESTION in t for t in server.texts_sent())          # the query was embedded by the endpoint
        added = live.ok("add", {"table": "envnotes", "documents": [{"body": "Renew the TLS certificate yearly."}]})
        assert added["added"] == 1
        assert "Renew the TLS certificate yearly." in server.texts_sent()   # embedded by the endpoint
        hits = live.ok("search", {"table": "envnotes", "query": "Renew the TLS certificate yearly.",
                                  "mode": "semantic", "limit": 1})
        assert [r["id"] for r in hits["results"]] == added["ids"]
        _no_key_in(live)
    finally:
        live.close()


def test_an_endpoint_the_operator_did_not_allow_is_refused(remote):
    path, server, _ = remote
    live = _stdio(path, "--allow-writes", env={ENV: KEY})
    try:
        server.requests.clear()
        text = live.error("search", {"table": "notes", "query": QUESTION, "mode": "semantic"})
        assert "1290" in text and "--allow-remote" in text and KEY not in text
        text = live.error("add", {"table": "notes", "documents": [{"body": "never embedded"}]})
        assert "1290" in text and KEY not in text
        assert server.requests == []                                     # nothing reached the endpoint
        _no_key_in(live)
    finally:
        live.close()
    live = _stdio(path, "--allow-remote", server.base + "/v1", env={ENV: KEY})   # URL allowed, env name not
    try:
        text = live.error("search", {"table": "envnotes", "query": QUESTION, "mode": "semantic"})
        assert "1290" in text and "--allow-env" in text
        assert server.requests == []
    finally:
        live.close()
    con = tesseradb.connect(path)
    assert con.execute("SELECT COUNT(*) FROM notes WHERE body = 'never embedded'").fetchone() == (0,)
    con.close()


def test_over_streamable_http_too(remote):
    path, server, want = remote
    proc = HttpProcess(path, "--allow-remote", server.base + "/v1")
    try:
        live = http(proc.url, None)
        try:
            found = live.ok("search", {"table": "notes", "query": QUESTION, "mode": "semantic", "limit": 3})
            assert [r["id"] for r in found["results"]] == want
            assert KEY not in json.dumps(live.ok("describe"))
        finally:
            live.close()
    finally:
        code, log = proc.stop()
    assert KEY not in log
