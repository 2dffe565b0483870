"""``/search`` with ``"chat"`` on ``tessera serve --http``: CALL CHAT over the HTTP JSON API."""
from __future__ import annotations

import httpx

import tesseradb
from tests.http.support import DDL, DOCS


def test_chat_over_http(tmp_path, standin):
    path = str(tmp_path / "docs.db")
    con = tesseradb.connect(path, autocommit=True)
    con.execute(DDL)
    con.executemany("INSERT INTO docs (id, title, body, team, year) VALUES (?, ?, ?, ?, ?)", DOCS)
    con.execute(f"CREATE CHAT MODEL helper (model='openai:m', base_url='{standin.base_url}')")
    con.close()
    srv = tesseradb.serve(path, port=0, http_port=0, background=True, allow_remote=(standin.base_url,))
    url = f"http://127.0.0.1:{srv.http_port}/search"
    try:
        r = httpx.post(url, json={"table": "docs", "chat": {"query": "how long are backups kept?", "model": "helper",
                                                           "conversation_uuid": "h1"}}, timeout=120)
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["conversation_uuid"] == "h1" and body["response"].startswith("[ref:")
        assert {s["id"] for s in body["sources"]} <= {d[0] for d in DOCS} and any(s["cited"] for s in body["sources"])
        follow = httpx.post(url, json={"table": "docs", "chat": {"query": "and restores?", "model": "helper",
                                                                 "conversation_uuid": "h1"}}, timeout=120).json()
        assert follow["search_query"] == "standalone: and restores?"
        bad = httpx.post(url, json={"table": "docs", "chat": {"query": "x", "model": "helper", "colour": 1}}, timeout=60)
        assert bad.status_code == 400 and "colour" in bad.text
        missing = httpx.post(url, json={"table": "docs", "chat": {"query": "x", "model": "nope"}}, timeout=60)
        assert missing.status_code == 500 and "chat model 'nope' does not exist" in missing.text
    finally:
        srv.stop()
