"""A chat model's answer, from an OpenAI-compatible chat-completions endpoint (docs/chat.md#endpoints):
OpenAI, OpenRouter, a local llama.cpp server, Ollama's /v1, vLLM, LM Studio.

It goes through the remote layer that remote embedding models use (``tesseradb.embed.remote``): the same
pooled client, retries with backoff on 429/5xx honouring ``Retry-After``, the chat model's ``timeout`` per
try, typed errors whose messages never hold the key, and the operator's allow-list of endpoints and
environment variables (``--allow-remote`` / ``--allow-env``; nothing is restricted in-process).
Streamed answers (``on_token``) read the endpoint's server-sent events and stop when the statement is
interrupted (Ctrl-C in the shell).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tesseradb import errors
from tesseradb.chat.spec import ChatModel
from tesseradb.embed.remote.access import UNRESTRICTED, RemoteAccess
from tesseradb.embed.remote.http import JsonEndpoint, RemoteError

Messages = list[dict[str, str]]


def api_key(model: ChatModel, access: RemoteAccess) -> str | None:
    """The key to send: the model's api_key (a key or env:NAME), else the provider's usual variable
    (OPENAI_API_KEY ...) when it is set and readable, else none (local servers need none)."""
    if model.api_key:
        return access.api_key(model.api_key)
    name = model.key_variable
    if name is None or (access.env is not None and name not in access.env):
        return None
    try:
        return access.api_key(f"env:{name}")
    except errors.OperationalError:      # the variable is not set: send no key
        return None


def _content(answer: Any, url: str) -> str:
    try:
        content = answer["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise RemoteError("malformed", url, "the answer has no choices[0].message.content") from None
    if not isinstance(content, str):
        raise RemoteError("malformed", url, "choices[0].message.content is not text")
    return content


def _delta(event: Any, url: str) -> str:
    try:
        choices = event["choices"]
        if not choices:
            return ""               # a usage-only event
        return choices[0].get("delta", {}).get("content") or ""
    except (KeyError, TypeError, AttributeError):
        raise RemoteError("malformed", url, "a streamed event has no choices[0].delta") from None


def complete(model: ChatModel, messages: Messages, *, access: RemoteAccess | None = None,
             on_token: Callable[[str], None] | None = None,
             cancelled: Callable[[], bool] | None = None) -> str:
    """The model's answer to ``messages``; streamed to ``on_token`` piece by piece when it is given."""
    access = access or UNRESTRICTED
    url = model.url
    access.check_url(url)
    key = api_key(model, access)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    endpoint = JsonEndpoint(url, timeout=float(model.timeout))
    payload: dict[str, Any] = {"model": model.model, "messages": messages}
    if on_token is None:
        return _content(endpoint.post(payload, headers=headers), url)
    parts: list[str] = []
    for event in endpoint.stream({**payload, "stream": True}, headers=headers):
        if cancelled is not None and cancelled():
            raise errors.Interrupted("CALL CHAT interrupted")
        piece = _delta(event, url)
        if piece:
            parts.append(piece)
            on_token(piece)
    return "".join(parts)
