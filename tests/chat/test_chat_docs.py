"""The CALL CHAT examples of docs/chat.md (Manticore's manual's, unchanged) run against the stand-in,
after the page's own statements created the table and the chat models."""
from __future__ import annotations

import json
import re
from pathlib import Path

import tesseradb
from tesseradb import grammar

PAGE = Path(__file__).resolve().parents[2] / "docs" / "chat.md"
FENCE = re.compile(r"^```sql\n(.*?)^```", re.M | re.S)
DOCUMENTED_URL = "http://127.0.0.1:8787/v1"


def blocks() -> list[str]:
    return FENCE.findall(PAGE.read_text(encoding="utf-8"))


def test_the_pages_call_chat_examples_run(tmp_path, standin):
    con = tesseradb.connect(str(tmp_path / "chat.db"), autocommit=True)
    cur = con.cursor()
    setup = [b for b in blocks() if not b.lstrip().startswith("--")]
    calls = [b for b in blocks() if b.lstrip().startswith("-- syntax: runs in tests/chat/test_chat_docs.py")]
    assert len(calls) == 3
    for block in setup:
        for piece in grammar.split(block.replace(DOCUMENTED_URL, standin.base_url)):
            cur.execute(piece.text)
    ids = {r[0] for r in cur.execute("SELECT id FROM docs").fetchall()}
    for block in calls:
        cur.execute(block.split("\n", 1)[1])
        uuid, question, searched, response, sources = cur.fetchone()
        assert question in block and response.startswith("[ref:")
        assert {s["id"] for s in json.loads(sources)} <= ids
    assert uuid and searched
