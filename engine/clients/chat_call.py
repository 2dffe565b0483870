"""``Connection.chat``: CALL CHAT from Python, answer and sources as values (docs/chat.md#from-python)."""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ChatAnswer:
    """One CALL CHAT row: Manticore's columns, ``sources`` decoded (a list of dicts, best first)."""
    conversation_uuid: str
    user_query: str
    search_query: str
    response: str
    sources: list[dict[str, Any]] = field(default_factory=list)

    @property
    def cited(self) -> list[dict[str, Any]]:
        """The sources the answer cites as ``[ref:<id>]``."""
        return [s for s in self.sources if s.get("cited")]


def chat(con: Any, question: str, table: str, model: str, conversation: str | None = None,
         vector_field: str | None = None, on_token: Callable[[str], None] | None = None) -> ChatAnswer:
    args = [question, table, model, conversation or ""] + ([vector_field] if vector_field else [])
    con.set_chat_stream(on_token)
    try:
        cur = con.execute("CALL CHAT(" + ", ".join("?" for _ in args) + ")", args)
    finally:
        con.set_chat_stream(None)
    uuid, asked, searched, response, sources = cur.fetchone()
    return ChatAnswer(uuid, asked, searched, response, json.loads(sources))
