"""Loopback stand-ins for hosted embedding APIs, serving real vectors from the local model.

One ``http.server`` on 127.0.0.1 (port 0) answers, each as its provider publishes it:

- ``POST /v1/embeddings``: OpenAI's embeddings API (``input`` a string or a list, ``model``,
  ``encoding_format`` ``float`` or ``base64`` — the official client asks for base64 —, ``dimensions``;
  answer ``{"object": "list", "data": [{"object": "embedding", "index", "embedding"}], "model", "usage"}``).
  Voyage (``input_type``, ``output_dimension``) and Jina (``task``, ``dimensions``, ``embedding_type``)
  answer in the same shape at the same path, as their references give it.
- ``POST /api/embed``: Ollama's native API (``{"model", "input"}`` -> ``{"model", "embeddings": [...]}``).

``faults`` is a list the server pops one entry of per request: ``{"status": 429, "headers": {...}}``,
``{"delay": seconds}``, ``{"raw": b"..."}`` (a malformed body), ``{"drop": 1}`` (fewer vectors),
``{"width": n}`` (vectors cut to n numbers). ``requests`` records ``(path, headers, body)``.
"""
from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np

Embedder = Callable[[list[str]], np.ndarray]
KEY = "sk-test-0123456789"     # the key the stand-ins of the tests want


class StandIn(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, embedder: Embedder, api_key: str | None = None):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.embedder = embedder
        self.api_key = api_key
        self.faults: list[dict] = []
        self.requests: list[tuple[str, dict, dict]] = []
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def __enter__(self) -> StandIn:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()

    def handle_error(self, request: object, client_address: object) -> None:
        """A client that gave up (a timeout test) closes the socket under a reply: not an error here."""

    def texts_sent(self) -> list[str]:
        out: list[str] = []
        for _, _, body in self.requests:
            value = body.get("input", body.get("prompt"))
            out.extend([value] if isinstance(value, str) else value)
        return out


class _Handler(BaseHTTPRequestHandler):
    server: StandIn
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def _reply(self, status: int, body: bytes, headers: dict | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def _error(self, status: int, message: str, headers: dict | None = None) -> None:
        self._reply(status, json.dumps({"error": {"message": message, "type": "invalid_request_error"}}).encode(),
                    headers)

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        length = int(self.headers.get("Content-Length", 0))
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            return self._error(400, "body is not JSON")
        with self.server.lock:
            self.server.requests.append((self.path, dict(self.headers), body))
            fault = self.server.faults.pop(0) if self.server.faults else {}
        if self.server.api_key is not None and self.headers.get("Authorization") != f"Bearer {self.server.api_key}":
            return self._error(401, "Incorrect API key provided")
        if "delay" in fault:
            time.sleep(fault["delay"])
        if "status" in fault:
            return self._error(fault["status"], fault.get("message", "injected failure"), fault.get("headers"))
        if "raw" in fault:
            return self._reply(200, fault["raw"])
        route = {"/v1/embeddings": self._openai, "/api/embed": self._ollama}.get(self.path.split("?")[0])
        if route is None:
            return self._error(404, f"no route {self.path}")
        route(body, fault)

    def _vectors(self, texts: list[str], fault: dict, width: int | None) -> np.ndarray:
        vectors = self.server.embedder(texts)
        if width:                                      # Matryoshka-style truncation, renormalised
            vectors = vectors[:, :width]
            vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        if "width" in fault:
            vectors = vectors[:, :fault["width"]]
        if "drop" in fault:
            vectors = vectors[:len(vectors) - fault["drop"]]
        return vectors.astype(np.float32)

    def _openai(self, body: dict, fault: dict) -> None:
        texts = body.get("input")
        texts = [texts] if isinstance(texts, str) else texts
        if not isinstance(texts, list) or not texts or any(not isinstance(t, str) or not t for t in texts):
            return self._error(400, "'input' must be a non-empty string or a list of non-empty strings")
        width = body.get("dimensions") or body.get("output_dimension")
        vectors = self._vectors(texts, fault, width)
        b64 = body.get("encoding_format") == "base64"
        data = [{"object": "embedding", "index": i,
                 "embedding": base64.b64encode(v.tobytes()).decode() if b64 else v.tolist()}
                for i, v in enumerate(vectors)]
        tokens = sum(len(t.split()) for t in texts)
        self._reply(200, json.dumps({"object": "list", "data": data, "model": body.get("model"),
                                     "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}).encode())

    def _ollama(self, body: dict, fault: dict) -> None:
        texts = body.get("input")
        texts = [texts] if isinstance(texts, str) else texts
        vectors = self._vectors(texts, fault, body.get("dimensions"))
        self._reply(200, json.dumps({"model": body.get("model"), "embeddings": vectors.tolist(),
                                     "total_duration": 1, "load_duration": 0,
                                     "prompt_eval_count": len(texts)}).encode())
