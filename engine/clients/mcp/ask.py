"""The ``ask`` tool (``tessera mcp DB --chat-model NAME``; docs/chat.md#agents): CALL CHAT for agents.

Off unless the operator starts the server with a chat model that the database holds. The call runs on
the worker's read-only connection: the conversation's history is kept in the server's memory (bounded),
the write lock is never taken, and the model's endpoint obeys --allow-remote like any remote model.
"""
from __future__ import annotations

from typing import Any

from tesseradb.clients.mcp.limits import MAX_FIELD_CHARS, MAX_PASSAGE_CHARS, cap
from tesseradb.clients.mcp.session import Session, ToolFailure


def check_model(s: Session) -> None:
    """At start: the chat model must exist (SHOW CHAT MODELS lists what does)."""
    if s.chat_model is None:
        return
    names = [r[0].lower() for r in s.reader.execute("SHOW CHAT MODELS").fetchall()]
    if s.chat_model.lower() not in names:
        raise LookupError(f"--chat-model {s.chat_model}: the database has no such chat model "
                          f"(SHOW CHAT MODELS lists {', '.join(names) or 'none'}; CREATE CHAT MODEL makes one)")


def _source(source: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"id": source.get("id")}
    for key in ("path", "title", "heading"):
        if source.get(key):
            out[key] = cap(str(source[key]), MAX_FIELD_CHARS)[0]
    out["passage"] = cap(source.get("passage") or "", MAX_PASSAGE_CHARS)[0]
    out["cited"] = bool(source.get("cited"))
    return out


def ask(s: Session, question: str, table: str | None = None, conversation: str | None = None) -> dict[str, Any]:
    if s.chat_model is None:
        raise ToolFailure("the server has no chat model: start tessera mcp with --chat-model NAME")
    info = s.table(table, searchable=True)
    if not info.search_column:
        raise ToolFailure(f"table '{info.name}' has no vector column with model_name and from= to ask")
    answer = s.reader.chat(question, info.name, s.chat_model, conversation)
    return {"answer": answer.response, "conversation": answer.conversation_uuid,
            "search_query": answer.search_query, "table": info.name,
            "sources": [_source(src) for src in answer.sources]}
