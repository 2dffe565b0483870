"""The MCP ``ask`` tool (``tessera mcp DB --chat-model NAME``), driven by the official MCP SDK client over
stdio: off unless asked for, answers with citations that map to rows, follow-ups keep their history in
the server's memory (the server's connections are read-only), and the operator's allow-list holds."""
from __future__ import annotations

import subprocess

import tesseradb
from tests.mcp.support import TESSERA, make_database, stdio


def _database(tmp_path, url: str) -> str:
    path = make_database(str(tmp_path / "docs.db"))
    con = tesseradb.connect(path, autocommit=True)
    con.execute(f"CREATE CHAT MODEL helper (model='openai:m', base_url='{url}')")
    con.close()
    return path


def test_ask_answers_with_sources_and_keeps_the_conversation(tmp_path, standin):
    db = _database(tmp_path, standin.base_url)
    plain = stdio(db)
    try:
        assert "ask" not in {t.name for t in plain.list_tools().tools}
    finally:
        plain.close()
    live = stdio(db, "--chat-model", "helper", "--allow-remote", standin.base_url)
    try:
        tool = next(t for t in live.list_tools().tools if t.name == "ask")
        assert tool.description.startswith("Ask a question about the documents") and "\n    " not in tool.description
        first = live.ok("ask", {"question": "how long are backups kept?", "table": "docs"})
        ids = {r[0] for r in tesseradb.connect(db, read_only=True).execute("SELECT id FROM docs").fetchall()}
        assert first["answer"].startswith("[ref:") and first["table"] == "docs"
        assert {s["id"] for s in first["sources"]} <= ids and any(s["cited"] for s in first["sources"])
        assert all("title" in s and "passage" in s for s in first["sources"])
        second = live.ok("ask", {"question": "and restores?", "conversation": first["conversation"]})
        assert second["search_query"] == "standalone: and restores?"
        roles = [m["role"] for m in standin.requests[-1]["json"]["messages"]]
        assert roles == ["system", "user", "assistant", "user"]
        assert "no chat model" not in live.error("ask", {"question": "x", "table": "labels"})
    finally:
        live.close()


def test_the_allow_list_holds_and_a_missing_model_is_refused_at_start(tmp_path, standin):
    db = _database(tmp_path, standin.base_url)
    live = stdio(db, "--chat-model", "helper")                 # no --allow-remote: the endpoint is refused
    try:
        message = live.error("ask", {"question": "how long are backups kept?", "table": "docs"})
        assert "--allow-remote" in message
    finally:
        live.close()
    assert standin.requests == []
    done = subprocess.run([TESSERA, "mcp", db, "--chat-model", "nope"], capture_output=True, text=True,
                          timeout=300, stdin=subprocess.DEVNULL)
    assert done.returncode == 1 and "no such chat model" in done.stderr and "helper" in done.stderr
