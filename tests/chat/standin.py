"""A loopback stand-in for an OpenAI-compatible chat-completions endpoint (POST /v1/chat/completions), as
OpenAI's API reference publishes it: a ``chat.completion`` object, or with ``stream: true`` server-sent
``chat.completion.chunk`` events ending with ``data: [DONE]``. test_standin.py proves it faithful by
driving it with the official ``openai`` client.

It records every request (JSON body and headers) and answers deterministically, so tests can check what
the engine sent and what it does with the answer:
- to the engine's rewrite prompt (a system message asking for a standalone query): ``standalone: <the
  last user message>``;
- otherwise: the labels ``[ref:<id>]`` of the sources in the last user message, in order, each followed
  by the first words of its text — so the answer cites real rows — or "I do not know." without sources.
Failures are scripted per request: ``fail(status, body, headers)``, ``delay(seconds)``, ``raw(body)``.
"""
from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

REF = re.compile(r"^\[ref:(\d+)\][^\n]*\n([^\n]*)", re.MULTILINE)


def answer_for(messages: list[dict]) -> str:
    system = messages[0]["content"] if messages and messages[0]["role"] == "system" else ""
    last = messages[-1]["content"]
    if system.startswith("Rewrite the user's last message"):
        return f"standalone: {last}"
    refs = REF.findall(last)
    if not refs:
        return "I do not know."
    return " ".join(f"[ref:{ref}] says: {' '.join(text.split()[:6])}." for ref, text in refs)


class ChatStandIn:
    def __init__(self, key: str | None = None):
        self.key = key
        self.requests: list[dict] = []
        self.script: deque = deque()
        standin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                standin.handle(self, body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    # -- scripting ----------------------------------------------------------------------------
    def fail(self, status: int, body: dict | None = None, headers: dict | None = None) -> None:
        self.script.append(("fail", status, body or {"error": {"message": f"scripted {status}", "type": "server_error"}},
                            headers or {}))

    def delay(self, seconds: float) -> None:
        self.script.append(("delay", seconds))

    def raw(self, body: bytes) -> None:
        self.script.append(("raw", body))

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> "ChatStandIn":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    # -- serving ------------------------------------------------------------------------------
    def _send(self, handler, status: int, body: bytes, headers: dict | None = None,
              content_type: str = "application/json") -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            handler.send_header(k, str(v))
        handler.end_headers()
        handler.wfile.write(body)

    def handle(self, handler, body: bytes) -> None:
        if handler.path.rstrip("/") != "/v1/chat/completions":
            return self._send(handler, 404, b'{"error": {"message": "not found"}}')
        request = json.loads(body)
        self.requests.append({"json": request, "headers": {k.lower(): v for k, v in handler.headers.items()}})
        if self.key is not None and handler.headers.get("Authorization") != f"Bearer {self.key}":
            return self._send(handler, 401, json.dumps({"error": {"message": "Incorrect API key provided",
                                                                  "type": "invalid_request_error"}}).encode())
        if self.script:
            step = self.script.popleft()
            if step[0] == "fail":
                return self._send(handler, step[1], json.dumps(step[2]).encode(), step[3])
            if step[0] == "delay":
                time.sleep(step[1])
            if step[0] == "raw":
                return self._send(handler, 200, step[1])
        content = answer_for(request["messages"])
        if request.get("stream"):
            return self._stream(handler, request, content)
        completion = {
            "id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion", "created": int(time.time()),
            "model": request["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "logprobs": None,
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": sum(len(m["content"].split()) for m in request["messages"]),
                      "completion_tokens": len(content.split()), "total_tokens": 0},
        }
        self._send(handler, 200, json.dumps(completion).encode())

    def _stream(self, handler, request: dict, content: str) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()

        def event(data: str) -> None:
            payload = f"data: {data}\n\n".encode()
            handler.wfile.write(f"{len(payload):x}\r\n".encode() + payload + b"\r\n")
            handler.wfile.flush()

        base = {"id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion.chunk",
                "created": int(time.time()), "model": request["model"]}
        event(json.dumps({**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                               "finish_reason": None}]}))
        for piece in re.findall(r"\S+\s*", content):
            event(json.dumps({**base, "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}))
        event(json.dumps({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}))
        event("[DONE]")
        handler.wfile.write(b"0\r\n\r\n")
        handler.wfile.flush()
