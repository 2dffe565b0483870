"""CALL CHAT over the MySQL protocol (PyMySQL against ``tessera serve``): chat models obey the operator's
allow-list of remote endpoints, so no client can point the server at a URL of its choosing."""
from __future__ import annotations

import json

import pymysql
import pytest

import tesseradb
from tests.server.support import DOCS, connect, load_docs


def test_a_client_cannot_point_the_server_at_its_own_url(tmp_path, standin):
    srv = tesseradb.serve(str(tmp_path / "docs.db"), port=0, background=True)
    try:
        with connect(srv.port) as c, c.cursor() as cur:
            with pytest.raises(pymysql.err.OperationalError) as raised:
                cur.execute(f"CREATE CHAT MODEL mine (model='openai:m', base_url='{standin.base_url}')")
            assert raised.value.args[0] == 1290 and "--allow-remote" in raised.value.args[1]
            cur.execute("SHOW CHAT MODELS")
            assert cur.fetchall() == ()
    finally:
        srv.stop()
    assert standin.requests == []


def test_call_chat_over_the_wire_with_an_allowed_endpoint(tmp_path, standin, monkeypatch):
    monkeypatch.setenv("TESSERA_TEST_SERVER_KEY", "k-123456")
    srv = tesseradb.serve(str(tmp_path / "docs.db"), port=0, background=True,
                          allow_remote=(standin.base_url,), allow_env=())
    try:
        load_docs(srv.port)
        with connect(srv.port) as c, c.cursor() as cur:
            with pytest.raises(pymysql.err.OperationalError) as raised:      # env: names are the operator's too
                cur.execute(f"CREATE CHAT MODEL e (model='openai:m', base_url='{standin.base_url}', "
                            "api_key='env:TESSERA_TEST_SERVER_KEY')")
            assert raised.value.args[0] == 1290 and "--allow-env" in raised.value.args[1]
            cur.execute(f"CREATE CHAT MODEL a (model='openai:m', base_url='{standin.base_url}', api_key='sk-wire-1')")
            cur.execute("CALL CHAT(%s, 'docs', 'a')", ("how long are backups kept?",))
            names = [d[0] for d in cur.description]
            row = dict(zip(names, cur.fetchone()))
            assert names == ["conversation_uuid", "user_query", "search_query", "response", "sources"]
            titles = {s["title"] for s in json.loads(row["sources"])}
            assert titles <= {d[0] for d in DOCS} and row["response"].startswith("[ref:")
            cur.execute("DESCRIBE CHAT MODEL a")
            assert ("api_key", "HIDDEN") in cur.fetchall()
        assert standin.requests[-1]["headers"]["authorization"] == "Bearer sk-wire-1"
    finally:
        srv.stop()
