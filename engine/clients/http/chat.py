"""``/search`` with ``"chat"``: CALL CHAT over the HTTP JSON API (docs/chat.md#over-http).

``{"table": "docs", "chat": {"query": "...", "model": "assistant", "conversation_uuid": "...",
"vector_field": "embedding"}}`` answers ``{"conversation_uuid", "user_query", "search_query",
"response", "sources": [...]}``: CALL CHAT's row, its sources as JSON objects. The values are bound
(``Connection.chat``), and the chat model's endpoint obeys the server's --allow-remote.
"""
from __future__ import annotations

from typing import Any

from tesseradb.clients.http.fields import RequestError, get, table_name

KEYS = {"query", "model", "conversation_uuid", "vector_field"}


def answer(con: Any, request: dict[str, Any]) -> dict[str, Any]:
    table = table_name(request)
    chat = get(request, "chat", "object", required=True)
    unknown = sorted(set(chat) - KEYS)
    if unknown:
        raise RequestError(f'unknown "chat" property "{unknown[0]}"; expected query, model, conversation_uuid, '
                           "vector_field")
    reply = con.chat(get(chat, "query", "string", required=True), table, get(chat, "model", "string", required=True),
                     get(chat, "conversation_uuid", "string") or None, get(chat, "vector_field", "string") or None)
    return {"conversation_uuid": reply.conversation_uuid, "user_query": reply.user_query,
            "search_query": reply.search_query, "response": reply.response, "sources": reply.sources}
